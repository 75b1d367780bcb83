import type { TimerName } from '../machine/step.js';

/**
 * The timers of one supervision, by name (setting one again replaces it).
 * One AbortController owns them all: `abort()` at the end clears every one.
 */
export class Timers {
  /** Undefined once it fired or was cleared: never deleted (a Map that empties makes V8 a new table each time). */
  private readonly timers = new Map<TimerName, NodeJS.Timeout | undefined>();
  private readonly controller = new AbortController();

  constructor(private readonly fire: (name: TimerName) => void) {
    this.controller.signal.addEventListener('abort', () => {
      for (const timer of this.timers.values()) clearTimeout(timer);
      this.timers.clear();
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  set(name: TimerName, ms: number): void {
    if (this.signal.aborted) return;
    this.clear(name);
    const timer = setTimeout(
      () => {
        this.timers.set(name, undefined);
        this.fire(name);
      },
      Math.max(0, ms),
    );
    this.timers.set(name, timer);
  }

  /** Sets it unless it is already running. */
  ensure(name: TimerName, ms: number): void {
    if (!this.timers.get(name)) this.set(name, ms);
  }

  clear(name: TimerName): void {
    const timer = this.timers.get(name);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.set(name, undefined);
  }

  abort(): void {
    this.controller.abort();
  }
}
