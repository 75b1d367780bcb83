import type { TimerName } from '../machine/step.js';
import type { Ending } from '../tree/looks.js';

/**
 * An AbortController's signal, and no more: the first AbortController loads Node's EventTarget, about 1 ms of
 * every start, and nothing hands this one to a Node API.
 */
class End implements Ending {
  aborted = false;
  private readonly listeners: Array<() => void> = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of this.listeners.splice(0)) listener();
  }
}

/**
 * The timers of one supervision, by name (setting one again replaces it).
 * One end owns them all: `abort()` at the end clears every one.
 */
export class Timers {
  /** Undefined once it fired or was cleared: never deleted (a Map that empties makes V8 a new table each time). */
  private readonly timers = new Map<TimerName, NodeJS.Timeout | undefined>();
  private readonly end = new End();

  constructor(private readonly fire: (name: TimerName) => void) {
    this.end.addEventListener('abort', () => {
      for (const timer of this.timers.values()) clearTimeout(timer);
      this.timers.clear();
    });
  }

  get signal(): Ending {
    return this.end;
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
    this.end.abort();
  }
}
