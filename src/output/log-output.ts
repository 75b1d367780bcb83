import { raisedOwnSigpipe } from '../platform/sigpipe.js';
import { stderrPut, type Put } from '../platform/linux/process/stderr.js';

// While stderr does not drain (a full pipe, a terminal in XOFF), lines wait
// here, this many at most; the rest are counted, and the count said where
// they went missing once writing works again. Never a wait: gsup's loop
// forwards signals, and a log line must not hold one back.
const MAX_LINES = 256;
const MAX_BYTES = 64 * 1024;
// Lines waiting: tried again with each new line, and after 1 ms, then twice as long each time, up to 100 ms.
const RETRY_FIRST_MS = 1;
const RETRY_MAX_MS = 100;

/** Where a Logger's lines go. */
export interface LogOutput {
  /** Set once a write failed for good (the reader is gone, stderr closed): nothing more is written. */
  readonly broken: boolean;
  write(line: string): void;
  /** Resolves once no line waits, or after `timeoutMs`. */
  flush(timeoutMs: number): Promise<void>;
  /** Finds its way to the reader now, while nothing waits on gsup, rather than at the first line. */
  ready?(): void;
}

/** stderr, never waited for: lines wait in a bounded queue instead (see platform/linux/process/stderr.ts for how). */
export class StderrOutput implements LogOutput {
  broken = false;
  private put?: Put;
  private readonly waiting: Buffer[] = [];
  private bytes = 0;
  private lost = 0;
  private retry?: NodeJS.Timeout;
  private retryMs = RETRY_FIRST_MS;
  private drained?: () => void;

  constructor(
    /** The line that says how many were lost. */
    private readonly lostLine: (count: number) => string,
    /** Opened at the first line: nothing is looked at when nothing is said. */
    private readonly open: () => Put = () => stderrPut(),
  ) {}

  write(line: string): void {
    if (this.broken) return;
    const data = Buffer.from(line);
    if (this.full(data)) this.drain(); // the reader may be back
    if (this.broken) return;
    if (this.full(data)) {
      this.lost++;
      return;
    }
    this.sayLost();
    this.enqueue(data);
    this.drain();
  }

  ready(): void {
    try {
      if (!this.broken) this.put ??= this.open();
    } catch {
      // the first line tries again, and says it its own way
    }
  }

  flush(timeoutMs: number): Promise<void> {
    if (this.broken || this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      // Not unref'd: gsup stays for the lines until then.
      const deadline = setTimeout(() => done(), timeoutMs);
      const done = () => {
        clearTimeout(deadline);
        this.drained = undefined;
        resolve();
      };
      this.drained = done;
    });
  }

  private full(data: Buffer): boolean {
    return this.waiting.length > 0 && (this.waiting.length >= MAX_LINES || this.bytes + data.length > MAX_BYTES);
  }

  /** Lines were lost just here: said before the next. */
  private sayLost(): void {
    if (this.lost === 0) return;
    this.enqueue(Buffer.from(this.lostLine(this.lost)));
    this.lost = 0;
  }

  private enqueue(data: Buffer): void {
    this.waiting.push(data);
    this.bytes += data.length;
  }

  private drain(): void {
    try {
      this.put ??= this.open();
      while (this.waiting.length > 0) {
        const head = this.waiting[0];
        const written = this.put(head);
        this.bytes -= written;
        if (written < head.length) {
          // Part of a long line: the rest when there is room again.
          this.waiting[0] = head.subarray(written);
          return this.later();
        }
        this.waiting.shift();
        if (this.waiting.length === 0) this.sayLost();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return this.later();
      // EPIPE (the reader is gone), EBADF (stderr closed), anything: the log falls silent, nothing else changes.
      this.broken = true;
      this.waiting.length = 0;
      this.lost = 0;
    }
    this.retryMs = RETRY_FIRST_MS;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.drained?.();
  }

  private later(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.retryMs = Math.min(2 * this.retryMs, RETRY_MAX_MS);
      this.drain();
    }, this.retryMs);
    // A library's process is not kept alive for its log (gsup's CLI waits with flush()).
    this.retry.unref();
  }
}

/** A write function of the caller's (the library's `write` option): a throw silences the log. */
export class CallbackOutput implements LogOutput {
  broken = false;

  constructor(private readonly send: (line: string) => void) {}

  write(line: string): void {
    if (this.broken) return;
    try {
      this.send(line);
    } catch (error) {
      this.broken = true;
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') raisedOwnSigpipe();
    }
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }
}
