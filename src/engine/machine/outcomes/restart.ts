import type { SignalName } from '../../../platform/types.js';
import type { CommandExit } from '../values.js';
import { deathSignal } from '../format.js';

export type RestartMode = 'never' | 'on-failure' | 'always';
export const RESTART_MODES: readonly RestartMode[] = ['never', 'on-failure', 'always'];

/** A run shorter than this is a quick failure: the delay doubles. A longer one resets it, and the count. */
export const STABLE_RUN_MS = 10_000;
export const MAX_RESTART_DELAY_MS = 30_000;

export type RestartDecision =
  { restart: false; reason?: string } | { restart: true; delayMs: number; reason: string; attempt: number };

/** The restarts so far: the next delay (undefined: the first) and the quick failures in a row. */
export interface RestartState {
  readonly delayMs: number | undefined;
  readonly quickFailures: number;
}

export interface RestartConfig {
  readonly restart: RestartMode;
  readonly maxRestarts: number;
  readonly restartDelay: number;
}

export function firstRestartState(): RestartState {
  return { delayMs: undefined, quickFailures: 0 };
}

/**
 * When to restart the command, and after how long: `on-failure` on a non-zero
 * exit or a signal gsup did not send, `always` on any exit. The delay doubles
 * after each run that lived less than 10 s, up to 30 s; `maxRestarts` quick
 * failures in a row give up (like pm2's max_restarts). A stable run resets both.
 */
export function decideRestart(
  state: RestartState,
  config: RestartConfig,
  exit: CommandExit,
  livedMs: number,
  sentByGsup: ReadonlySet<SignalName>,
): { decision: RestartDecision; state: RestartState } {
  if (config.restart === 'never' || exit.errorCode !== undefined) return { decision: { restart: false }, state };
  const signal = deathSignal(exit);
  const reason = signal ? `died of ${signal}` : `exited with code ${exit.code}`;
  // A real-time signal is never one gsup sent (it forwards 1-31): a failure.
  const failed = exit.signal ? !sentByGsup.has(exit.signal) : signal !== undefined || exit.code !== 0;
  return next(state, config, reason, failed, livedMs);
}

/** After a stop for failed health checks (or a failed start): a failure, whatever the command's status. */
export function restartAfterUnhealthy(
  state: RestartState,
  config: RestartConfig,
  livedMs: number,
  reason = 'was unhealthy',
): { decision: RestartDecision; state: RestartState } {
  if (config.restart === 'never') return { decision: { restart: false }, state };
  return next(state, config, reason, true, livedMs);
}

function next(
  state: RestartState,
  config: RestartConfig,
  reason: string,
  failed: boolean,
  livedMs: number,
): { decision: RestartDecision; state: RestartState } {
  if (config.restart === 'on-failure' && !failed) return { decision: { restart: false }, state };
  const base = Math.min(config.restartDelay, MAX_RESTART_DELAY_MS);
  let { delayMs = base, quickFailures } = state;
  if (livedMs >= STABLE_RUN_MS) {
    quickFailures = 0;
    delayMs = base;
  }
  // A long run is no failure in a row: it restarts even under --max-restarts 0.
  if (livedMs < STABLE_RUN_MS && quickFailures >= config.maxRestarts) {
    return {
      decision: { restart: false, reason: `${reason}; giving up after ${config.maxRestarts} restart(s) in a row` },
      state: { delayMs, quickFailures },
    };
  }
  const decision: RestartDecision = { restart: true, delayMs, reason, attempt: quickFailures };
  if (livedMs < STABLE_RUN_MS) {
    quickFailures++;
    delayMs = Math.min(delayMs * 2, MAX_RESTART_DELAY_MS);
    decision.attempt = quickFailures;
  }
  return { decision, state: { delayMs, quickFailures } };
}
