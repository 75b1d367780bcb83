import type { Platform } from '../../platform/index.js';
import type { HeldInput } from '../machine/state.js';
import type { HeldSockets } from './held.js';

// After a spawn, the kernel is asked this often (then twice as long each time) who of the run takes a held
// socket, until each one is taken or the run is a minute old: for processes that say nothing (no preload,
// a native server, a run under --no-listen-preload). The preload's word makes it unneeded, and ends it.
const FIRST_MS = 250;
const LAST_MS = 32_000;

/**
 * Who of a run takes a held socket, as the kernel shows it (an epoll set watching it, an accept(2) on it):
 * each found as `socket-taken` for that run, once per socket. Per run: two runs may live at once.
 */
export class TakerSamples {
  private readonly runs = new Map<number, { timer: NodeJS.Timeout; taken: Set<string> }>();

  constructor(
    private readonly platform: Platform,
    private readonly held: HeldSockets,
    private readonly heard: (input: HeldInput) => void,
  ) {}

  /** Run `run` (its command `pid`) started. */
  started(run: number, pid: number | undefined): void {
    if (pid === undefined || !this.platform.socketTakers) return;
    const sample = (delayMs: number) => {
      const timer = setTimeout(() => {
        this.look(run, pid);
        if (this.runs.has(run) && delayMs < LAST_MS) sample(delayMs * 2);
        else this.ended(run);
      }, delayMs);
      timer.unref();
      const watch = this.runs.get(run);
      if (watch) watch.timer = timer;
      else this.runs.set(run, { timer, taken: new Set() });
    };
    sample(FIRST_MS);
  }

  /** The run said it took `name` (the preload's word): no need to look for it. */
  taken(run: number, name: string): void {
    const watch = this.runs.get(run);
    watch?.taken.add(name);
    if (watch && this.held.names.every((held) => watch.taken.has(held))) this.ended(run);
  }

  /** The run is over (or gsup ends): no more samples of it. */
  ended(run: number): void {
    clearTimeout(this.runs.get(run)?.timer);
    this.runs.delete(run);
  }

  close(): void {
    for (const run of [...this.runs.keys()]) this.ended(run);
  }

  private look(run: number, pid: number): void {
    const watch = this.runs.get(run);
    if (!watch) return;
    const inodes = this.held.inodes();
    const found = this.platform.socketTakers!(pid, new Set(inodes.keys()));
    for (const { pid: taker, ino } of found) {
      const name = inodes.get(ino)!;
      if (watch.taken.has(name)) continue;
      this.taken(run, name);
      this.heard({ kind: 'socket-taken', run, name, pid: taker, seen: 'kernel' });
    }
  }
}
