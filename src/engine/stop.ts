import type { SignalName } from '../platform/index.js';
import { formatDuration, type EngineContext } from './context.js';
import { killTree, type KilledProcess } from './kill.js';
import type { TreeSnapshot } from './tree.js';
import { waitForEmptyTree } from './wait-empty.js';
import { sleep } from './wakeup.js';

export interface StopSummary {
  durationMs: number;
  /** Processes that ended by themselves after the stop signal. */
  exited: number;
  killed: KilledProcess[];
}

// Between two looks at the tree while it shuts down; a SIGCHLD wakes the
// wait earlier.
const MIN_POLL_MS = 20;

/**
 * The stop sequence, in the order the spec gives it: stop delay, forward the
 * stop signal, wait for the whole tree, SIGKILL what is left at the kill
 * timeout (repeatedly), then one summary line.
 */
export class StopSequence {
  private readonly delayOver = new AbortController();
  private readonly killNow = new AbortController();
  private forwarded = false;

  constructor(
    private readonly context: EngineContext,
    private readonly killTimeoutMs: number,
  ) {}

  /** A second stop signal: ends the stop delay if we are in it, else SIGKILLs at once. */
  escalate(): void {
    if (!this.forwarded && !this.delayOver.signal.aborted) {
      this.context.logger.notice('stop-delay-ended', 'second stop signal: forwarding now');
      this.delayOver.abort();
      return;
    }
    this.context.logger.notice('kill-now', 'second stop signal: killing the tree now');
    this.killNow.abort();
  }

  async run(signal: SignalName, delayMs: number, reason: string): Promise<StopSummary> {
    const { logger } = this.context;
    const started = Date.now();
    logger.notice('stop', `${reason}: stopping the tree with ${signal} (kill timeout ${formatDuration(this.killTimeoutMs)})`, {
      signal,
      reason,
      killTimeoutMs: this.killTimeoutMs,
      stopDelayMs: delayMs,
    });

    if (delayMs > 0) {
      logger.notice('stop-delay', `waiting ${formatDuration(delayMs)} before forwarding ${signal}`, { delayMs });
      await sleep(delayMs, this.delayOver.signal);
    }

    const seen = new Set<number>();
    const remember = (snapshot: TreeSnapshot) => {
      for (const info of snapshot.alive) seen.add(info.pid);
    };
    this.forwarded = true;
    const first = await this.context.forward(signal, { stop: true });
    remember(first.snapshot);
    // With `--target child`, the processes the child leaves behind never got
    // the stop signal: once the child is gone, they get it (once) too.
    let missed = new Set(first.snapshot.alive.map((info) => info.pid).filter((pid) => !first.reached.has(pid)));
    const followUp = (snapshot: TreeSnapshot) => {
      remember(snapshot);
      if (missed.size === 0 || snapshot.alive.some((info) => info.pid === this.context.commandPid)) return;
      const only = new Set(snapshot.alive.map((info) => info.pid).filter((pid) => missed.has(pid)));
      missed = new Set();
      if (only.size > 0) void this.context.forward(signal, { only, stop: true });
    };

    const deadline = Date.now() + this.killTimeoutMs;
    const empty = await waitForEmptyTree(this.context, {
      deadline,
      pollMs: MIN_POLL_MS,
      cancel: this.killNow.signal,
      onSnapshot: followUp,
    });

    let killed: KilledProcess[] = [];
    if (!empty && !this.context.abort.aborted) {
      if (!this.killNow.signal.aborted) {
        logger.warn('kill-timeout', `kill timeout (${formatDuration(this.killTimeoutMs)}) expired: sending SIGKILL`);
      }
      killed = await killTree(this.context);
    }

    const durationMs = Date.now() - started;
    const killedPids = new Set(killed.map((process) => process.pid));
    const exited = [...seen].filter((pid) => !killedPids.has(pid)).length;
    const shown = killed.slice(0, 10).map(({ pid, command }) => (command ? `${pid} (${command})` : `${pid}`));
    if (killed.length > shown.length) shown.push(`and ${killed.length - shown.length} more`);
    logger.notice(
      'stopped',
      `stopped in ${formatDuration(durationMs)}: ${exited} exited by themselves, ${killed.length} killed` +
        (killed.length > 0 ? `: ${shown.join(', ')}` : ''),
      { durationMs, exited, killed: killed.map(({ pid, command }) => ({ pid, command })) },
    );
    return { durationMs, exited, killed };
  }
}
