import { monotonicMs } from '../../platform/clock.js';
import type { Platform, ProcessInfo } from '../../platform/index.js';

// A read of /proc/PID/cmdline can block for as long as its process is stuck
// (`D` state, a hung FUSE mount): never on the loop, and never many at once.
// Reads run on libuv's pool, at most this many at a time (its other threads
// stay free for gsup's other work), each waited for this long.
const READERS = 2;
const WAIT_MS = 100;
// The stop summary names this many of the killed, the oldest first.
export const NAMED = 10;

/** A process as one command line: its pid, start time and name (a title or an exec changes the name). */
function keyOf(info: ProcessInfo): string {
  return `${info.pid}:${info.startTime}:${info.name}`;
}

/** Started before `other` (pids wrap around, start times do not). */
function older(info: ProcessInfo, other: ProcessInfo): boolean {
  return info.startTime < other.startTime || (info.startTime === other.startTime && info.pid < other.pid);
}

/**
 * The command lines gsup needs (pm2's titles, tsx, the names in the stop
 * summary and at -v), read ahead off the loop — at the spawn and in each
 * look, which the signal path never waits for — and known from then on by
 * value. A process whose line is not known yet is taken for a plain one.
 */
export class CommandLines {
  private readonly known = new Map<string, string>();
  private readonly queue = new Map<string, ProcessInfo>();
  /** Every process asked about (its key's process), to forget it once it is gone. */
  private readonly seen = new Map<string, ProcessInfo>();
  /** Reads in flight, by key: since when. */
  private readonly reading = new Map<string, number>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly platform: Platform) {}

  /** Its command line, if read ('' stands for none: `[name]` then). */
  of(info: ProcessInfo): string | undefined {
    const line = this.known.get(keyOf(info));
    return line === undefined ? undefined : line || `[${info.name}]`;
  }

  /**
   * Reads the lines of these processes not known yet; resolves once they are
   * in, or after WAIT_MS with what is in by then (the rest keeps coming). A
   * read stuck past WAIT_MS is waited for no more; with every reader stuck,
   * nothing new is read until one comes back.
   */
  learn(infos: Iterable<ProcessInfo>): Promise<void> {
    const awaited = new Set<string>();
    const now = monotonicMs();
    for (const info of infos) {
      const key = keyOf(info);
      if (this.known.has(key)) continue;
      const since = this.reading.get(key);
      if (since === undefined) (this.queue.set(key, info), this.seen.set(key, info));
      if (since === undefined || now - since < WAIT_MS) awaited.add(key);
    }
    this.pump();
    const stuck = [...this.reading.values()].filter((since) => now - since >= WAIT_MS).length;
    const settled = () => [...awaited].every((key) => !this.queue.has(key) && !this.reading.has(key));
    if (settled() || stuck >= READERS) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!settled()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => (this.waiters.delete(check), resolve()), WAIT_MS);
      this.waiters.add(check);
    });
  }

  /** For a log line: its command line, else its name in brackets, else ''. */
  describe(info: ProcessInfo): string {
    return this.of(info) ?? (info.name ? `[${info.name}]` : '');
  }

  /** For a -v line that knows the pid alone: the line of whichever process has it now, if read; else '?'. */
  describePid(pid: number): string {
    const prefix = `${pid}:`;
    for (const [key, line] of this.known) {
      if (key.startsWith(prefix)) return line || `[${key.slice(key.indexOf(':', prefix.length) + 1)}]`;
    }
    return '?';
  }

  /** What a look needs read: `verbose` names who joined; the oldest are named if they are killed. */
  wanted(snapshot: { readonly alive: ProcessInfo[]; readonly joined: ProcessInfo[] }, verbose: boolean): ProcessInfo[] {
    const wanted = new Set<ProcessInfo>(verbose ? snapshot.joined : []);
    const oldest: ProcessInfo[] = [];
    for (const info of snapshot.alive) {
      // tsx and the pm2 CLI run in node; a God daemon or a pm2-runtime lands as gsup's child or leads a session.
      const node = info.name === '' || info.name.startsWith('node') || info.name === 'pm2';
      if (node || info.ppid === process.pid || info.sid === info.pid) wanted.add(info);
      // The NAMED oldest in one pass (a look at a large tree must not sort it).
      if (oldest.length < NAMED || older(info, oldest[oldest.length - 1])) {
        const at = oldest.findIndex((other) => older(info, other));
        oldest.splice(at < 0 ? oldest.length : at, 0, info);
        if (oldest.length > NAMED) oldest.pop();
      }
    }
    for (const info of oldest) wanted.add(info);
    return [...wanted];
  }

  /** Forgets the processes no longer there as they were (what the stop summary needs it has copied). */
  keepOnly(current: ReadonlyMap<number, ProcessInfo>): void {
    for (const [key, info] of this.seen) {
      const now = current.get(info.pid);
      if (now !== undefined && keyOf(now) === key) continue;
      this.seen.delete(key);
      this.known.delete(key);
      this.queue.delete(key);
    }
  }

  private pump(): void {
    while (this.reading.size < READERS && this.queue.size > 0) {
      const [key, info] = this.queue.entries().next().value as [string, ProcessInfo];
      this.queue.delete(key);
      this.reading.set(key, monotonicMs());
      void this.platform.readCommandLine(info.pid).then((line) => {
        this.reading.delete(key);
        // Gone before it could be read: its name stands for it. Forgotten meanwhile: not kept.
        if (this.seen.has(key)) this.known.set(key, line ?? '');
        this.pump();
        for (const check of [...this.waiters]) check();
      });
    }
  }
}
