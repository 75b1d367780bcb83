import {
  isAlive,
  type EnvironRead,
  type Platform,
  type ProcessInfo,
  type ProcessUser,
  type ReapedChild,
  type ReapResult,
  type SignalName,
} from '../../src/platform/index.js';

/** An in-memory process table: unit tests see every kill(2) and need no real signals. */
export class FakePlatform implements Platform {
  readonly canSignal = true;
  readonly spawnWithExeca = false;
  readonly processes = new Map<number, ProcessInfo>();
  readonly kills: Array<{ pid: number; signal: SignalName }> = [];
  /** How many looks at the whole table were taken. */
  looks = 0;
  /** What a process does when it gets a signal; default: dies on SIGKILL only. */
  onSignal: (info: ProcessInfo, signal: SignalName) => void = (info, signal) => {
    if (signal === 'SIGKILL') this.processes.delete(info.pid);
  };

  add(info: Partial<ProcessInfo> & { pid: number; ppid: number }): ProcessInfo {
    const full: ProcessInfo = {
      pgid: info.pid,
      sid: info.pid,
      state: 'S',
      startTime: 1000 + info.pid,
      name: 'fake',
      ...info,
    };
    this.processes.set(full.pid, full);
    return full;
  }

  /** While set, a look waits for it (a slow /proc: what happens meanwhile comes first). */
  lookGate?: Promise<void>;
  async listProcesses() {
    this.looks++;
    if (this.lookGate) await this.lookGate;
    return [...this.processes.values()].map((info) => ({ ...info }));
  }
  async processInfo(pid: number) {
    const info = this.processes.get(pid);
    return info && { ...info };
  }
  /** The clock start times are read against (the fake start times are 1000 + pid). */
  now = 1_000_000;
  startTimeNow() {
    return this.now;
  }
  /** The moment of a send: the clock above, and the highest pid in the table as the last one handed out. */
  sendMoment: NonNullable<Platform['sendMoment']> = () => ({
    tick: this.now,
    lastPid: Math.max(0, ...this.processes.keys()),
    pidMax: 4_194_304,
  });
  /** Who of a group's planned members is outside it after its send: none unless a test says (Linux reads /proc). */
  leftGroup?: Platform['leftGroup'];
  readonly commandLines = new Map<number, string>();
  /** Pids that run as another user than gsup. */
  readonly otherUsers = new Set<number>();
  ownerMatches(pid: number) {
    return !this.otherUsers.has(pid);
  }
  /** Pids gsup may not signal (EPERM); `signalDenied` answers from it, and counts its asks. */
  readonly denied = new Set<number>();
  deniedAsks = 0;
  signalDenied(pid: number) {
    this.deniedAsks++;
    return this.denied.has(pid);
  }
  /** Each pid's user and group, where set; else nobody (65534) for those in `otherUsers`, gsup's for the others. */
  readonly users = new Map<number, ProcessUser | undefined>();
  async processUser(pid: number): Promise<ProcessUser | undefined> {
    if (this.users.has(pid)) return this.users.get(pid);
    if (this.otherUsers.has(pid)) return { uid: 65534, gid: 65534 };
    return { uid: process.geteuid!(), gid: process.getegid!() };
  }
  /** Each pid's environment; `environValue` answers from it (a live pid with none: unreadable, EACCES). */
  readonly environs = new Map<number, NodeJS.ProcessEnv>();
  /** Pids whose environment read never answers (a process in `D` state). */
  readonly stuckEnvirons = new Set<number>();
  /** Pids whose environment read fails for now (EMFILE). */
  readonly failingEnvirons = new Set<number>();
  /** Pids that exit between a look's listing and their environment's read: the read finds them gone. */
  readonly goneEnvirons = new Set<number>();
  environReads = 0;
  environValue(pid: number, name: string): Promise<EnvironRead> {
    this.environReads++;
    if (this.stuckEnvirons.has(pid)) return new Promise((resolve) => this.stuckReads.push({ pid, name, resolve }));
    return Promise.resolve(this.environAnswer(pid, name));
  }
  private readonly stuckReads: Array<{ pid: number; name: string; resolve: (read: EnvironRead) => void }> = [];
  /** The stuck reads of `pid` answer at last (the process left `D` state). */
  unstickEnviron(pid: number): void {
    this.stuckEnvirons.delete(pid);
    for (const read of this.stuckReads.filter((each) => each.pid === pid))
      read.resolve(this.environAnswer(pid, read.name));
  }
  private environAnswer(pid: number, name: string): EnvironRead {
    if (this.failingEnvirons.has(pid)) return { found: 'failed', why: 'EMFILE' };
    if (!this.processes.has(pid) || this.goneEnvirons.has(pid)) return { found: 'gone' };
    const env = this.environs.get(pid);
    if (!env) return { found: 'unreadable', why: 'EACCES' };
    const value = env[name];
    return value === undefined ? { found: 'absent' } : { found: 'value', value };
  }
  handOverTerminal?: Platform['handOverTerminal'];
  /** The pids whose command line was read (the engine reads them ahead, off the loop). */
  readonly linesRead = new Set<number>();
  async readCommandLine(pid: number) {
    this.linesRead.add(pid);
    return this.commandLines.get(pid) ?? `cmd-${pid}`;
  }
  kill(pid: number, signal: SignalName) {
    this.kills.push({ pid, signal });
    const hit =
      pid < 0
        ? [...this.processes.values()].filter((info) => info.pgid === -pid)
        : [this.processes.get(pid)].filter(Boolean);
    for (const info of hit) this.onSignal(info as ProcessInfo, signal);
    return hit.length > 0;
  }

  /** Is `seen` still the process in the table: same start time, not a zombie (what a pidfd check finds)? */
  private same(seen: ProcessInfo): boolean {
    const now = this.processes.get(seen.pid);
    return now !== undefined && now.startTime === seen.startTime && now.state !== 'Z';
  }
  /** Signals that did not go out because the pid named another process (or none) by then. */
  readonly refused: Array<{ pid: number; signal: SignalName }> = [];
  signalProcesses(processes: readonly ProcessInfo[], signal: SignalName) {
    let reached = 0;
    for (const info of processes) {
      if (this.same(info)) reached += this.kill(info.pid, signal) ? 1 : 0;
      else this.refused.push({ pid: info.pid, signal });
    }
    return reached;
  }
  signalGroup(leader: ProcessInfo, signal: SignalName) {
    if (leader.pid !== leader.pgid || !this.same(leader) || this.processes.get(leader.pid)!.pgid !== leader.pgid)
      return false;
    return this.kill(-leader.pgid, signal);
  }
  /** gsup's child, held by its number (as where there are no pidfds): only while the engine says it is unreaped. */
  holdChild(pid: number) {
    return { pid };
  }
  signalChild(child: { pid: number }, signal: SignalName, group: boolean, byNumber: boolean) {
    return byNumber && this.kill(group ? -child.pid : child.pid, signal);
  }
  releaseChild() {}

  /** SIGCHLD: the engine's listener, fired by `sigchld()`. */
  private childListener?: () => void;
  watchChildren(listener: () => void) {
    this.childListener = listener;
    return () => (this.childListener = undefined);
  }
  sigchld(): void {
    this.childListener?.();
  }

  /** Reaping (as PID 1 or subreaper): set `reaping` to offer it. */
  reaping = false;
  /** Zombie children of gsup waiting to be reaped, with their status. */
  readonly zombies: ReapedChild[] = [];
  adoptOrphans?: (subreaper: boolean) => string | undefined;
  reapOne?: (keep: ReadonlySet<number>) => ReapedChild | 'none' | 'blocked';
  ownChildren?: () => number[] | undefined;
  childOutside?: (known: ReadonlySet<number>, pgid: number | undefined) => boolean | undefined;
  hasChildren?: () => boolean | undefined;
  reapZombies?: (keep: ReadonlySet<number>) => ReapResult;
  enableReaping(gsupPid: number): void {
    this.adoptOrphans = () => undefined;
    this.reapOne = () => {
      const next = this.zombies.shift();
      if (next) this.processes.delete(next.pid);
      return next ?? 'none';
    };
    this.ownChildren = () =>
      [...this.processes.values()].filter((info) => info.ppid === gsupPid).map((info) => info.pid);
    this.childOutside = (known, pgid) =>
      [...this.processes.values()].some(
        (info) => info.ppid === gsupPid && !known.has(info.pid) && isAlive(info) && info.pgid !== pgid,
      );
  }

  /** A child of gsup dies with this status: a zombie until reaped. */
  die(pid: number, status: { code: number | null; signal: number | null }): void {
    const info = this.processes.get(pid);
    if (info) info.state = 'Z';
    this.zombies.push({ pid, ...status });
  }
}
