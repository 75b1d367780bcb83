import type { EngineEvent, EventQueue } from './queue.js';

/**
 * One loop, one event at a time (never two in flight): events that come
 * while a handler waits (for a look at the tree) queue up, merged, behind it.
 * An event that finds the loop idle and nothing waiting is the one it would
 * take next: handled at once, in the same tick it came (the signal fast path).
 */
export class EventLoop {
  /** A handler runs (the loop or the fast path). */
  busy = false;
  /** Start-up is over: events pushed before it (held signals) wait until then. */
  private started = false;

  constructor(
    private readonly queue: EventQueue,
    private readonly handle: (event: EngineEvent) => void | Promise<void>,
    private readonly fault: (error: unknown) => void,
    /** The supervision is over: nothing more is taken. */
    private readonly over: () => boolean,
    private readonly ended: () => void,
  ) {}

  start(): void {
    this.started = true;
    void this.run(); // what came in before
  }

  /** Takes events until none is left or the supervision is over. */
  async run(): Promise<void> {
    if (this.busy || !this.started) return;
    this.busy = true;
    try {
      for (let event = this.queue.take(); event && !this.over(); event = this.queue.take()) {
        try {
          const pending = this.handle(event);
          if (pending) await pending;
        } catch (error) {
          this.fault(error);
        }
      }
    } finally {
      this.busy = false;
    }
    if (this.over()) this.ended();
  }

  /** An event handled at once when the loop is idle and nothing waits (it cannot await); else queued. */
  now(event: EngineEvent): void {
    if (this.busy || !this.started || this.queue.length > 0 || this.over()) return this.queue.push(event);
    this.busy = true;
    try {
      void this.handle(event);
    } catch (error) {
      this.fault(error);
    } finally {
      this.busy = false;
    }
    void this.run(); // what it queued, and the end if it ended the supervision
  }
}

/** What an error says, for the fault it becomes. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
