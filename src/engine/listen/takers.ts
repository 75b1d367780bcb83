import { monotonicMs } from '../../platform/clock.js';
import type { Platform } from '../../platform/index.js';
import type { HeldInput, SampleWhy } from '../machine/state.js';
import type { HeldSockets } from './held.js';

// Who of a run takes a held socket, as the kernel shows it: for processes that say nothing (no preload, a native
// server, a run under --no-listen-preload). Sampled after a spawn until each socket is taken: a reload's next run
// steadily (its readiness waits on it), any other run every 250 ms, then less often (up to every 2 s) until it
// is a minute old; and on the machine's demand (sample-takers), answered by `takers-sampled` after what it found.
// The preload's word makes the samples unneeded, and ends them.
const FIRST_MS = 250;
const NEXT_MS = 250;
const MOST_MS = 2000;
const WATCH_MS = 64_000;

interface Watch {
  readonly pid: number;
  readonly since: number;
  /** A reload's next run, not ready yet: sampled steadily. */
  next: boolean;
  every: number;
  timer?: NodeJS.Timeout;
  /** The sample under way: one at a time. */
  busy?: Promise<void>;
  readonly taken: Set<string>;
}

/**
 * Who of a run takes a held socket, as the kernel shows it (an epoll set watching it, an accept(2) on it): each
 * found as `socket-taken` for that run, once per socket. Per run: two runs may live at once.
 */
export class TakerSamples {
  private readonly runs = new Map<number, Watch>();
  private closed = false;

  constructor(
    private readonly platform: Platform,
    private readonly held: HeldSockets,
    private readonly heard: (input: HeldInput) => void,
  ) {}

  /** Run `run` (its command `pid`) started: `next`, a reload's next run. */
  started(run: number, pid: number | undefined, next: boolean): void {
    if (pid === undefined || !this.platform.socketTakers || this.closed) return;
    this.runs.set(run, { pid, since: monotonicMs(), next, every: FIRST_MS, taken: new Set() });
    this.schedule(run);
  }

  /** A next run is the current run now (ready): sampled as any other. */
  settled(run: number): void {
    const watch = this.runs.get(run);
    if (watch) watch.next = false;
  }

  /** The run said it took `name` (the preload's word): no need to look for it. */
  taken(run: number, name: string): void {
    const watch = this.runs.get(run);
    watch?.taken.add(name);
    if (watch && this.all(watch)) clearTimeout(watch.timer);
  }

  /** The machine asks: the kernel's view now (after any sample under way), then `takers-sampled`. */
  sample(run: number, why: SampleWhy): void {
    const watch = this.runs.get(run);
    const fresh = watch && !this.all(watch) ? (watch.busy ?? Promise.resolve()).then(() => this.once(run)) : undefined;
    const answer = () => this.closed || this.heard({ kind: 'takers-sampled', run, why });
    if (fresh) void fresh.then(answer, answer);
    else queueMicrotask(answer);
  }

  /** The run is over (or gsup ends): no more samples of it. */
  ended(run: number): void {
    clearTimeout(this.runs.get(run)?.timer);
    this.runs.delete(run);
  }

  close(): void {
    this.closed = true;
    for (const run of [...this.runs.keys()]) this.ended(run);
  }

  private all(watch: Watch): boolean {
    return this.held.names.every((name) => watch.taken.has(name));
  }

  private schedule(run: number): void {
    const watch = this.runs.get(run);
    if (!watch || this.closed || this.all(watch)) return;
    if (!watch.next && monotonicMs() - watch.since > WATCH_MS) return;
    const wait = watch.next ? NEXT_MS : watch.every;
    watch.every = Math.min(watch.every * 2, MOST_MS);
    watch.timer = setTimeout(() => void this.once(run).then(() => this.schedule(run)), wait);
    watch.timer.unref();
  }

  /** One sample of the run at a time. */
  private once(run: number): Promise<void> {
    const watch = this.runs.get(run);
    if (!watch) return Promise.resolve();
    if (watch.busy) return watch.busy;
    const done = () => void (watch.busy = undefined);
    watch.busy = this.look(run, watch).then(done, done);
    return watch.busy;
  }

  private async look(run: number, watch: Watch): Promise<void> {
    const inodes = this.held.inodes();
    const found = await this.platform.socketTakers!(watch.pid, new Set(inodes.keys()));
    if (this.closed || this.runs.get(run) !== watch) return;
    for (const { pid: taker, ino } of found) {
      const name = inodes.get(ino)!;
      if (watch.taken.has(name)) continue;
      this.taken(run, name);
      this.heard({ kind: 'socket-taken', run, name, pid: taker, seen: 'kernel' });
    }
  }
}
