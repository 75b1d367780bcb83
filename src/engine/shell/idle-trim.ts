import type { Ending } from '../tree/looks.js';
/**
 * Gives the allocator's free pages back once the loop has been busy: one trim
 * `delayMs` after the first event of a burst, none while gsup is idle (no
 * timer then). As PID 1 under churn glibc otherwise keeps several MiB that
 * gsup freed long ago (measured with bench/soak.js).
 */
export class IdleTrim {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly trim: () => void,
    private readonly delayMs: number,
    done: Ending,
  ) {
    done.addEventListener('abort', () => clearTimeout(this.timer));
  }

  /** An event was handled. */
  touch(): void {
    if (this.timer) return;
    // Unref'd: it never keeps gsup alive.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.trim();
    }, this.delayMs).unref();
  }
}
