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

/** The same process, as far as its command line goes: its start time and name (a title or an exec changes the name). */
function same(info: ProcessInfo, other: ProcessInfo): boolean {
  return info.startTime === other.startTime && info.name === other.name;
}

/** A process asked about, by pid: its line once read ('' for none), since when it is read while it is. */
interface Entry {
  readonly info: ProcessInfo;
  line: string | undefined;
  since: number | undefined;
  /** Waits in the queue to be read (cleared when forgotten: the queue skips it). */
  queued: boolean;
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
  // No table here empties and fills again with every process: V8 makes such a Map or Set a new table each
  // time, in the old generation once the Map is there. Queues are arrays, and the entries a new Map (young)
  // whenever a look forgets some.
  /** Every process asked about, by pid (one entry each, reused: a look makes no key and no entry for a known one). */
  private entries = new Map<number, Entry>();
  private queue: Entry[] = [];
  /** Reads in flight (stuck ones included). */
  private readonly reading: Entry[] = [];
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly platform: Platform) {}

  /** Its command line, if read ('' stands for none: `[name]` then). */
  of(info: ProcessInfo): string | undefined {
    const entry = this.entries.get(info.pid);
    if (entry?.line === undefined || !same(entry.info, info)) return undefined;
    return entry.line || `[${info.name}]`;
  }

  /**
   * Reads the lines of these processes not known yet; resolves once they are
   * in, or after WAIT_MS with what is in by then (the rest keeps coming). A
   * read stuck past WAIT_MS is waited for no more; with every reader stuck,
   * nothing new is read until one comes back.
   */
  learn(infos: Iterable<ProcessInfo>): Promise<void> {
    const awaited: Entry[] = [];
    const now = monotonicMs();
    for (const info of infos) {
      let entry = this.entries.get(info.pid);
      if (!entry || !same(entry.info, info)) {
        // Another process with that pid, or the same after an exec: a read in flight for the old one is not kept.
        if (entry) entry.queued = false;
        entry = { info, line: undefined, since: undefined, queued: false };
        this.entries.set(info.pid, entry);
      }
      if (entry.line !== undefined) continue;
      if (entry.since === undefined && !entry.queued) {
        entry.queued = true;
        this.queue.push(entry);
      }
      if (entry.since === undefined || now - entry.since < WAIT_MS) awaited.push(entry);
    }
    this.pump();
    let stuck = 0;
    for (const entry of this.reading) if (now - entry.since! >= WAIT_MS) stuck++;
    const settled = () => awaited.every((entry) => !entry.queued && entry.since === undefined);
    if (settled() || stuck >= READERS) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!settled()) return;
        clearTimeout(timer);
        remove(this.waiters, check);
        resolve();
      };
      const timer = setTimeout(() => (remove(this.waiters, check), resolve()), WAIT_MS);
      this.waiters.push(check);
    });
  }

  /** For a log line: its command line, else its name in brackets, else ''. */
  describe(info: ProcessInfo): string {
    return this.of(info) ?? (info.name ? `[${info.name}]` : '');
  }

  /** For a -v line that knows the pid alone: the line of whichever process has it now, if read; else '?'. */
  describePid(pid: number): string {
    const entry = this.entries.get(pid);
    return entry?.line === undefined ? '?' : entry.line || `[${entry.info.name}]`;
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
    const there = (entry: Entry) => {
      const now = current.get(entry.info.pid);
      return now !== undefined && same(now, entry.info);
    };
    let gone = 0;
    for (const entry of this.entries.values()) if (!there(entry)) gone++;
    if (gone === 0) return;
    const kept = new Map<number, Entry>();
    for (const entry of this.entries.values()) {
      if (there(entry)) kept.set(entry.info.pid, entry);
      else entry.queued = false; // a read in flight for it goes on; what it brings is not kept
    }
    this.entries = kept;
    this.queue = this.queue.filter((entry) => entry.queued);
  }

  private pump(): void {
    while (this.reading.length < READERS && this.queue.length > 0) {
      const entry = this.queue.shift()!;
      if (!entry.queued) continue; // forgotten meanwhile
      entry.queued = false;
      entry.since = monotonicMs();
      this.reading.push(entry);
      void this.platform.readCommandLine(entry.info.pid).then((line) => {
        remove(this.reading, entry);
        entry.since = undefined;
        // Gone before it could be read: its name stands for it. Forgotten meanwhile: not kept.
        if (this.entries.get(entry.info.pid) === entry) entry.line = line ?? '';
        this.pump();
        for (const check of [...this.waiters]) check();
      });
    }
  }
}

/** Takes `item` out of `list` (a short one), if it is there. */
function remove<T>(list: T[], item: T): void {
  const at = list.indexOf(item);
  if (at >= 0) list.splice(at, 1);
}
