import type { EngineContext } from './context.js';
import type { TreeSnapshot } from './tree.js';
import { sleep } from './wakeup.js';

export interface WaitOptions {
  /** Give up at this time (Date.now() ms); Infinity waits for ever. */
  deadline: number;
  /** How long between two looks when nothing wakes the wait (at least twice what a look costs). */
  pollMs: number;
  /** Stop waiting early (a second stop signal). */
  cancel?: AbortSignal;
  onSnapshot?: (snapshot: TreeSnapshot) => void;
}

/** Waits until no process of the tree is alive; false when the deadline or a cancel came first. */
export async function waitForEmptyTree(context: EngineContext, options: WaitOptions): Promise<boolean> {
  const stop = options.cancel ? anySignal(context.abort, options.cancel) : context.abort;
  for (;;) {
    const scanStarted = performance.now();
    const snapshot = await context.scan();
    const scanMs = performance.now() - scanStarted;
    options.onSnapshot?.(snapshot);
    if (snapshot.alive.length === 0) return true;
    const left = options.deadline - Date.now();
    if (left <= 0 || stop.aborted) return false;
    await context.wakeup.wait(Math.min(Math.max(options.pollMs, 2 * scanMs), left), stop);
    // A wake-up (SIGCHLD) comes early, but not sooner than twice what a look
    // costs: where a look spawns a process (ps), its own exit wakes us too.
    const gap = 2 * scanMs - (performance.now() - scanStarted - scanMs);
    if (gap > 1) await sleep(gap, stop);
  }
}

/** AbortSignal.any, which Node 20.0–20.2 lacks. */
export function anySignal(...signals: AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) controller.abort();
    else signal.addEventListener('abort', () => controller.abort(), { once: true });
  }
  return controller.signal;
}
