import type { ProcessTree, TreeSnapshot } from './tree.js';

/**
 * Looks at the tree on request, never two looks at once, and never sooner
 * after the last one than twice what a look costs (where a look spawns `ps`,
 * its own exit must not call the next). Requests made meanwhile merge into
 * one; each finished look is handed to `done` (as a `tree` event).
 */
export class ScanScheduler {
  private running = false;
  private timer?: NodeJS.Timeout;
  private dueAt = Infinity;
  private lastEnd = 0;
  private lastCost = 0;
  /** When the newest snapshot was taken, and the snapshot. */
  takenAt = -Infinity;
  latest?: TreeSnapshot;

  constructor(
    private readonly tree: ProcessTree,
    private readonly done: (snapshot: TreeSnapshot) => void,
    private readonly fail: (error: unknown) => void,
    private readonly abort: AbortSignal,
  ) {
    abort.addEventListener('abort', () => clearTimeout(this.timer));
  }

  /** A look within `delayMs` (0: as soon as allowed). */
  request(delayMs = 0): void {
    if (this.abort.aborted) return;
    const at = Math.max(performance.now() + delayMs, this.lastEnd + 2 * this.lastCost);
    if (this.running) {
      this.dueAt = Math.min(this.dueAt, at);
      return;
    }
    if (this.timer && at >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = setTimeout(() => this.run(), Math.max(0, at - performance.now()));
  }

  /** Is the newest snapshot at most `ms` old? */
  fresh(ms: number): boolean {
    return performance.now() - this.takenAt <= ms;
  }

  private run(): void {
    this.timer = undefined;
    this.dueAt = Infinity;
    this.running = true;
    const started = performance.now();
    this.tree.scan().then(
      (snapshot) => {
        this.running = false;
        this.lastEnd = performance.now();
        this.lastCost = this.lastEnd - started;
        this.takenAt = started;
        this.latest = snapshot;
        if (this.abort.aborted) return;
        if (this.dueAt !== Infinity) {
          const at = this.dueAt;
          this.dueAt = Infinity;
          this.request(Math.max(0, at - performance.now()));
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
