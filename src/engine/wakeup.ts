/**
 * A timer that something else can cut short: the stop waits on it between two
 * looks at the tree, and a child's exit (SIGCHLD) wakes it at once.
 */
export class Wakeup {
  private waiters = new Set<() => void>();

  /** Resolves after `ms`, on `wake()`, or when `abort` fires, whichever is first. */
  wait(ms: number, abort?: AbortSignal): Promise<void> {
    if (abort?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      abort?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  wake(): void {
    for (const done of [...this.waiters]) done();
  }
}

/**
 * A plain pause that only `abort` cuts short — not a SIGCHLD: the stop delay
 * and the wait before a restart must not end because some child exited.
 */
export function sleep(ms: number, abort?: AbortSignal): Promise<void> {
  if (abort?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      abort?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    abort?.addEventListener('abort', done, { once: true });
  });
}
