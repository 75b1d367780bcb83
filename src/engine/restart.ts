import type { SignalName } from '../platform/index.js';
import type { CommandExit } from './spawn.js';

export type RestartMode = 'never' | 'on-failure' | 'always';
export const RESTART_MODES: readonly RestartMode[] = ['never', 'on-failure', 'always'];

/** A run shorter than this is a quick failure: the delay doubles. A longer one resets it, and the count. */
export const STABLE_RUN_MS = 10_000;
export const MAX_RESTART_DELAY_MS = 30_000;

export type RestartDecision = { restart: false; reason?: string } | { restart: true; delayMs: number; reason: string; attempt: number };

/**
 * When to restart the command, and after how long: `on-failure` on a non-zero
 * exit or a signal gsup did not send, `always` on any exit. The delay doubles
 * after each run that lived less than 10 s, up to 30 s; `maxRestarts` quick
 * failures in a row give up (like pm2's max_restarts). A stable run resets both.
 */
export class RestartPolicy {
  private delayMs: number;
  private quickFailures = 0;

  constructor(
    private readonly mode: RestartMode,
    private readonly maxRestarts: number,
    private readonly baseDelayMs: number,
  ) {
    this.delayMs = Math.min(baseDelayMs, MAX_RESTART_DELAY_MS);
  }

  decide(exit: CommandExit, livedMs: number, sentByGsup: ReadonlySet<SignalName>): RestartDecision {
    if (this.mode === 'never' || exit.errorCode !== undefined) return { restart: false };
    const reason = exit.signal ? `died of ${exit.signal}` : `exited with code ${exit.code}`;
    const failed = exit.signal ? !sentByGsup.has(exit.signal) : exit.code !== 0;
    return this.next(reason, failed, livedMs);
  }

  /** After a stop for failed health checks: a failure, whatever the command's status. */
  unhealthy(livedMs: number): RestartDecision {
    if (this.mode === 'never') return { restart: false };
    return this.next('was unhealthy', true, livedMs);
  }

  private next(reason: string, failed: boolean, livedMs: number): RestartDecision {
    if (this.mode === 'on-failure' && !failed) return { restart: false };
    if (livedMs >= STABLE_RUN_MS) {
      this.quickFailures = 0;
      this.delayMs = Math.min(this.baseDelayMs, MAX_RESTART_DELAY_MS);
    }
    if (this.quickFailures >= this.maxRestarts) {
      return { restart: false, reason: `${reason}; giving up after ${this.maxRestarts} restart(s) in a row` };
    }
    const delayMs = this.delayMs;
    if (livedMs < STABLE_RUN_MS) {
      this.quickFailures++;
      this.delayMs = Math.min(this.delayMs * 2, MAX_RESTART_DELAY_MS);
    }
    return { restart: true, delayMs, reason, attempt: this.quickFailures };
  }
}
