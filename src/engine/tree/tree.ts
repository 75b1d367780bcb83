import { isAlive, type Platform, type ProcessInfo } from '../../platform/index.js';
import type { Provenance } from './provenance.js';
import { CommandLines } from './command-lines.js';
import { OwnBefore } from './own-before.js';
import { ProbeGroups } from './probe-groups.js';
import { ReapedPids } from './reaped.js';
import { Strangers } from './strangers.js';
import { RunAttribution } from './runs.js';
import type { Snapshot, Judgment } from '../machine/values.js';

/** How the tree tells its own among gsup's children as PID 1, where every orphan of the namespace lands. */
export interface Origin {
  provenance: Provenance;
  /** Children Node spawned (the command, probes, `pm2 kill`): gsup's own. */
  nodeChildren: ReadonlySet<number>;
  /** Orphans of processes outside the tree come to gsup (PID 1): a child of gsup is not the tree's by that alone. */
  strict: boolean;
}

// The commands (one a run) remembered until seen leaving the tree.
const COMMANDS_KEPT = 16;

/**
 * The processes gsup is responsible for: its descendants, every process that was once seen among them and is still
 * the same process (pid and start time) wherever it was reparented, and the processes of the command's session.
 * As PID 1, a child of gsup no look saw descend from a run is the tree's only with the run's mark (see Provenance);
 * never a stranger (see Strangers). Later sources (a pm2 God daemon) join through `adopt`.
 */
export class ProcessTree {
  /**
   * pid → start time of every process seen in the tree: a reused pid is a stranger. A look that changes it makes a
   * new Map (young) rather than delete from this one: V8 gives a Map that churns a new table for each few entries,
   * in the old generation once the Map is there.
   */
  private known = new Map<number, number>();
  private command?: ProcessInfo;
  /** The current run: its command is `command`. */
  private current = 0;
  /** Each run's command, until a look sees it leave. */
  private readonly commands = new Set<number>();
  /** gsup's own probes (health commands): no part of the tree. */
  readonly probes: ProbeGroups;
  /** Which run each member is of, while two live (a reload). */
  private readonly runs: RunAttribution;
  /** gsup's own children from before its first spawn (a preload's, in gsup's first image), and what they start. */
  private readonly before = new OwnBefore();
  /** The pids gsup reaped: until a look has seen past the reap, what holds one is not what was known by it. */
  private readonly reaped = new ReapedPids();
  /** Never the tree's: what entered gsup's PID namespace from outside (and what it starts), or gsup cannot signal. */
  private readonly strangers: Strangers;
  private last: Promise<unknown> = Promise.resolve();
  /** The command lines of its processes, read ahead off the loop. */
  readonly lines: CommandLines;

  constructor(
    private readonly platform: Platform,
    private readonly rootPid: number = process.pid,
    private readonly origin?: Origin,
    private readonly verbose = false, // read every joining process's command line (for -v)
    private readonly later: (act: () => void) => void = setImmediate, // the start's own work (AfterStart)
  ) {
    this.lines = new CommandLines(platform);
    this.probes = new ProbeGroups(platform);
    this.runs = new RunAttribution(rootPid);
    this.strangers = new Strangers(platform, rootPid, origin?.strict ?? false);
  }

  /** The command's process as last seen alive (its start time names it). */
  get commandInfo(): ProcessInfo | undefined {
    return this.command;
  }

  /**
   * Run `run`'s command, once spawned: its session is the tree's (read before the next look). `current`: the
   * current run's (a reload's next run is not, until it is handed over); `beside`: a run still retiring beside
   * it. Resolves to it.
   */
  setCommand(pid: number, run = this.current + 1, current = true, beside?: number): Promise<ProcessInfo | undefined> {
    this.runs.started(run, pid, this.platform.startTimeNow());
    // A run that starts as the current one follows a run whose tree is gone (a restart): it is watched, and a run
    // retiring beside it still (a reload's), whose part of each look its retiring waits for.
    if (current) (this.runs.live(beside === undefined ? [run] : [beside, run]), (this.current = run));
    this.commands.add(pid);
    // One no look ever saw (gone at once) is never seen leaving: only the newest are kept.
    for (const old of this.commands) if (this.commands.size > COMMANDS_KEPT) this.commands.delete(old);
    const read = this.last.then(
      () => this.readCommand(pid, run),
      () => this.readCommand(pid, run),
    );
    this.last = read;
    return read;
  }

  /** Run `run` is the current one now (a reload handed over): the command is its command. */
  setCurrent(run: number): void {
    this.current = run;
    this.command = this.runs.commandOf(run);
  }

  /** The runs whose trees are still watched (the others' are gone): members are told apart while two are. */
  liveRuns(live: readonly number[]): void {
    this.runs.live(live);
  }

  private async readCommand(pid: number, run: number): Promise<ProcessInfo | undefined> {
    const read = await this.platform.processInfo(pid);
    // Read after gsup reaped it, the pid names another process (or none).
    const info = read && this.runs.commandRead(run, read) ? read : undefined;
    if (info) {
      if (run === this.current) this.command = info;
      this.known.set(pid, info.startTime);
      // Whether it is a pm2 manager, before the first forward needs it (until then a forward looks): read once the
      // command has run a while (AfterStart: the first read starts libuv's pool, ~1.5 ms of the loop's thread).
      this.later(() => void this.lines.learn([info]));
    }
    return info;
  }

  /** gsup's children before its first spawn: none is the tree's, nor what they start (start times read first). */
  noteChildrenBefore(pids: readonly number[]): void {
    if (pids.length === 0) return;
    const read = async () => {
      for (const pid of pids) {
        const info = await this.platform.processInfo(pid);
        if (info?.ppid === this.rootPid) this.before.note(info);
      }
    };
    this.last = this.last.then(read, read);
  }

  /** A child of gsup was reaped: true when it was none of the tree's (its status is not the tree's either). */
  reapedApart(pid: number): boolean {
    this.wasReaped(pid);
    const own = this.before.reaped(pid);
    return (this.origin?.provenance.reaped(pid) ?? false) || own;
  }

  /** gsup reaped this pid (the command's, or an orphan's): whatever holds it next is a new process. */
  wasReaped(pid: number): void {
    this.reaped.add(pid, this.known.has(pid));
    this.runs.reaped(pid);
  }

  /** Take a process that is not a descendant (a God daemon found by its pid file) into the tree. */
  adopt(info: ProcessInfo): void {
    this.known.set(info.pid, info.startTime);
  }

  /** One look at a time: each updates what is known, in order. */
  look(): Promise<Snapshot> {
    const next = this.last.then(
      () => this.lookNow(),
      () => this.lookNow(),
    );
    this.last = next;
    return next;
  }

  private async lookNow(): Promise<Snapshot> {
    const look = this.reaped.begin();
    const snapshot = await this.lookAt(look);
    this.reaped.end(look);
    return snapshot;
  }

  private async lookAt(look: number): Promise<Snapshot> {
    const all = await this.platform.listProcesses();
    const byPid = new Map<number, ProcessInfo>();
    const children = new Map<number, ProcessInfo[]>();
    const groups = new Map<number, ProcessInfo[]>();
    for (const info of all) {
      byPid.set(info.pid, info);
      push(children, info.ppid, info);
      push(groups, info.pgid, info);
    }

    this.probes.forgetGone(byPid, groups);
    this.before.follow(children, byPid);
    const entered = this.strangers.see(all, byPid, children);

    // What this look can take for a process known before: the same pid and start time, the pid not reaped since.
    const same = (pid: number, startTime: number) => this.known.get(pid) === startTime && !this.reaped.gone(pid, look);
    const { own, pending, judgments } = await this.ownChildren(children.get(this.rootPid) ?? [], byPid, same);
    judgments.unshift(...entered);
    const roots: ProcessInfo[] = [...own];
    for (const pid of this.known.keys()) {
      const info = byPid.get(pid);
      if (info && same(pid, info.startTime)) roots.push(info);
    }
    // Each run's command as it is now (its name changes with an exec, or npm's title). Its session id counts only
    // while its leader is the command seen (alive or unreaped): after that the number names nothing.
    for (const command of this.runs.commands(byPid)) {
      if (command.pid === this.command?.pid) this.command = command;
      if (command.sid !== command.pid || command.sid <= 0) continue;
      // A process that double-forked out of the command's ancestry but not out of its session (no setsid) is
      // still the command's.
      for (const info of all) if (info.sid === command.sid && info.startTime >= command.startTime) roots.push(info);
    }

    const members: ProcessInfo[] = [];
    const seen = new Set<number>([this.rootPid]);
    const walk = (queue: ProcessInfo[]) => {
      while (queue.length > 0) {
        const info = queue.pop()!;
        if (seen.has(info.pid) || this.probes.owns(info, byPid)) continue;
        seen.add(info.pid);
        // One gsup may not signal is no member (what it starts may be); a member known before was judged then.
        if (same(info.pid, info.startTime) || !this.strangers.mayNotSignal(info, judgments)) members.push(info);
        const below = children.get(info.pid);
        if (below) queue.push(...below);
      }
    };
    walk(roots);
    // Orphans with no judgment yet, and what they run: the tree's meanwhile, but not known (judged again next look).
    const certain = members.length;
    walk(pending);
    const tentative = new Set(members.slice(certain));

    const alive = members.filter(isAlive);
    const joined: ProcessInfo[] = [];
    for (const info of alive) {
      if (!same(info.pid, info.startTime) && !tentative.has(info)) joined.push(info);
    }
    const left: number[] = [];
    const stays = (startTime: number, pid: number) => {
      const info = byPid.get(pid);
      return info !== undefined && info.startTime === startTime && same(pid, startTime) && isAlive(info);
    };
    // A pid that a new process took (it joined) did not leave.
    const retaken = (pid: number) => joined.some((info) => info.pid === pid);
    this.known.forEach((startTime, pid) => stays(startTime, pid) || retaken(pid) || left.push(pid));
    if (joined.length > 0 || left.length > 0) {
      const known = new Map<number, number>();
      this.known.forEach((startTime, pid) => stays(startTime, pid) && known.set(pid, startTime));
      for (const info of joined) known.set(info.pid, info.startTime);
      this.known = known;
    }

    // Part of the look: the command lines it needs (see CommandLines.wanted), read off the loop; those gone forgotten.
    this.lines.keepOnly(byPid);
    const named = this.verbose ? judgments.map((judgment) => judgment.info) : []; // -v names each one judged
    await this.lines.learn([...this.lines.wanted({ alive, joined }, this.verbose), ...named]);
    const leftCommands = left.filter((pid) => this.commands.delete(pid));
    const runs = this.runs.attribute({ members, byPid, judgments, marks: await this.marksOf(members) });
    return { members, alive, groups, children, joined, left, leftCommands, judgments, ...(runs && { runs }) };
  }

  /** Not as PID 1, gsup's orphans are the tree's unjudged: while two runs live, their marks say whose they are. */
  private async marksOf(members: readonly ProcessInfo[]): Promise<Map<number, number> | undefined> {
    const origin = this.origin;
    if (!this.runs.active || !origin || origin.strict) return undefined;
    const orphans = members.filter(
      (info) =>
        info.ppid === this.rootPid && isAlive(info) && !origin.nodeChildren.has(info.pid) && this.runs.unknown(info),
    );
    return orphans.length === 0 ? undefined : origin.provenance.runMarks(orphans);
  }

  /**
   * gsup's children that are the tree's; those with no judgment yet; and the judgments new in this look. Not as
   * PID 1 they are the tree's unjudged, unless gsup had children of its own before its first spawn: what those
   * start comes to gsup (the subreaper) too, and one no look saw below them is judged as PID 1 judges.
   */
  private async ownChildren(
    children: ProcessInfo[],
    byPid: ReadonlyMap<number, ProcessInfo>,
    same: (pid: number, startTime: number) => boolean,
  ): Promise<Owned> {
    const judgments = this.before.judge(children);
    const all = this.before.had ? children.filter((info) => !this.before.owns(info)) : children;
    const origin = this.origin;
    if (!origin || (!origin.strict && !this.before.had)) return { own: all, pending: [], judgments };
    const seen = (info: ProcessInfo) =>
      same(info.pid, info.startTime) || origin.nodeChildren.has(info.pid) || this.probes.running(info.pid);
    // A zombie has no environment left to read: reaped, it needs no judgment.
    const unseen = all.filter((info) => !seen(info) && isAlive(info));
    if (unseen.length === 0) return { own: all.filter(seen), pending: [], judgments };
    const known = {
      member: (info: ProcessInfo) => info.pid === this.rootPid || seen(info),
      apart: (info: ProcessInfo) => this.before.owns(info),
      stranger: (info: ProcessInfo) => this.strangers.stranger(info),
    };
    const { ours, pending, fresh } = await origin.provenance.judge(unseen, byPid, known);
    judgments.push(...fresh);
    const own = all.filter((info) => seen(info) || ours.has(info.pid));
    return { own, pending: all.filter((info) => pending.has(info.pid)), judgments };
  }
}

interface Owned {
  own: ProcessInfo[];
  pending: ProcessInfo[];
  judgments: Judgment[];
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
