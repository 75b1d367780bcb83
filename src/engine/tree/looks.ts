import { monotonicMs } from '../../platform/clock.js';
import type { ProcessTree } from './tree.js';
import type { Snapshot } from '../machine/values.js';

/** The end of one supervision, as its parts wait on it: an AbortSignal is one (the tests pass theirs). */
export interface Ending {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Looks at the tree on request, never two looks at once, and never sooner
 * after the last one than twice what a look costs (where a look spawns `ps`,
 * its own exit must not call the next). Requests made meanwhile merge into
 * one; each finished look is handed to `done` (as a `looked` event).
 */
export class Looks {
  private running = false;
  private timer?: NodeJS.Timeout;
  private immediate?: NodeJS.Immediate;
  private dueAt = Infinity;
  private lastEnd = 0;
  private lastCost = 0;
  /** When the newest snapshot was taken, and the snapshot. */
  takenAt = -Infinity;
  last?: Snapshot;

  constructor(
    private readonly tree: ProcessTree,
    private readonly done: (snapshot: Snapshot) => void,
    private readonly fail: (error: unknown) => void,
    private readonly abort: Ending,
  ) {
    abort.addEventListener('abort', () => this.cancel());
  }

  /** A look within `delayMs` (0: as soon as allowed). */
  take(delayMs = 0): void {
    if (this.abort.aborted) return;
    const at = Math.max(monotonicMs() + delayMs, this.lastEnd + 2 * this.lastCost);
    if (this.running) {
      this.dueAt = Math.min(this.dueAt, at);
      return;
    }
    if ((this.timer || this.immediate) && at >= this.dueAt) return;
    this.cancel();
    this.dueAt = at;
    const wait = at - monotonicMs();
    // Due now: the next turn of the loop, not a timer's millisecond.
    if (wait <= 0) this.immediate = setImmediate(() => this.run());
    else this.timer = setTimeout(() => this.run(), wait);
  }

  /** Is the newest snapshot at most `ms` old? */
  fresh(ms: number): boolean {
    return monotonicMs() - this.takenAt <= ms;
  }

  private cancel(): void {
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private run(): void {
    this.timer = undefined;
    this.immediate = undefined;
    this.dueAt = Infinity;
    this.running = true;
    const started = monotonicMs();
    this.tree.look().then(
      (snapshot) => {
        this.running = false;
        this.lastEnd = monotonicMs();
        this.lastCost = this.lastEnd - started;
        this.takenAt = started;
        this.last = snapshot;
        if (this.abort.aborted) return;
        if (this.dueAt !== Infinity) {
          const at = this.dueAt;
          this.dueAt = Infinity;
          this.take(Math.max(0, at - monotonicMs()));
        }
        this.done(snapshot);
      },
      (error: unknown) => {
        this.running = false;
        this.fail(error);
      },
    );
  }
}
