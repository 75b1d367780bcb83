import type { Logger } from '../../log.js';
import { isAlive, type Platform, type ProcessInfo } from '../../platform/index.js';
import type { Provenance } from './provenance.js';
import { CommandLines } from './command-lines.js';
import type { Snapshot } from '../machine/values.js';

// A reaped probe is forgotten this long after (start-time units: ticks on Linux, ms elsewhere) though no look saw its
// group empty: what it left in its group was SIGKILLed when it was reaped. (The map stays small without looks.)
const FORGET_PROBES_AFTER = 60_000;

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
 * The processes gsup is responsible for: its descendants, every process that
 * was once seen among them and is still the same process (pid and start time)
 * wherever it was reparented, and the processes of the command's session.
 * As PID 1, a child of gsup no look saw descend from a run is the tree's only
 * with the run's mark (see Provenance). Later sources (a pm2 God daemon)
 * join through `adopt`.
 */
export class ProcessTree {
  /**
   * pid → start time of every process seen in the tree: a reused pid is a
   * stranger. A look that changes it makes a new Map (young) rather than
   * delete from this one: V8 gives a Map that churns a new table for each
   * few entries, in the old generation once the Map is there.
   */
  private known = new Map<number, number>();
  private command?: ProcessInfo;
  /** Each run's command, until a look sees it leave. */
  private readonly commands = new Set<number>();
  /**
   * gsup's own probes (health commands), each the leader of its group, by
   * pid: when it was reaped (Infinity while it runs), in start-time units.
   */
  private readonly probes = new Map<number, { reapedAt: number }>();
  private last: Promise<unknown> = Promise.resolve();
  /** The command lines of its processes, read ahead off the loop. */
  readonly lines: CommandLines;

  constructor(
    private readonly platform: Platform,
    private readonly rootPid: number = process.pid,
    private readonly origin?: Origin,
    /** Read every joining process's command line (for -v). */
    private readonly verbose = false,
  ) {
    this.lines = new CommandLines(platform);
  }

  /** The command's process as last seen alive (its start time names it). */
  get commandInfo(): ProcessInfo | undefined {
    return this.command;
  }

  /** The command's own process, once spawned: its session is the tree's (read before the next look). Resolves to it. */
  setCommand(pid: number): Promise<ProcessInfo | undefined> {
    this.commands.add(pid);
    // One no look ever saw (gone at once) is never seen leaving: only the newest are kept.
    for (const old of this.commands) if (this.commands.size > COMMANDS_KEPT) this.commands.delete(old);
    const read = this.last.then(
      () => this.readCommand(pid),
      () => this.readCommand(pid),
    );
    this.last = read;
    return read;
  }

  private async readCommand(pid: number): Promise<ProcessInfo | undefined> {
    const info = await this.platform.processInfo(pid);
    if (info) {
      this.command = info;
      this.known.set(pid, info.startTime);
      void this.lines.learn([info]); // whether it is a pm2 manager: known before the first forward needs it
    }
    return info;
  }

  /**
   * A probe (Node's child, leading a group of its own): it and its group are
   * no part of the tree. No look may be needed to forget it: pids wrap
   * around, and the running phase takes none.
   */
  ignoreProbe(pid: number): void {
    const now = this.platform.startTimeNow();
    for (const [probe, { reapedAt }] of this.probes)
      if (now - reapedAt > FORGET_PROBES_AFTER) this.probes.delete(probe);
    this.probes.set(pid, { reapedAt: Infinity });
  }

  /**
   * The probe was reaped (its pid is free from now on): only what started
   * before this, it or what it left in its group, is the probe's; a later
   * process with that pid or group id (after the pid counter went round:
   * the restarted command itself) is not.
   */
  probeReaped(pid: number): void {
    const probe = this.probes.get(pid);
    if (probe) probe.reapedAt = this.platform.startTimeNow();
  }

  /**
   * The probe's own process, or one it left in its group? While Node has not
   * reaped the probe, its pid and its group id are certainly its own. Once
   * reaped (Node says so in the very callback that reaps it), a process with
   * its pid is a later one (the pid counter went round), and so is the group
   * that one leads: the kernel hands out no pid still in use as a group id,
   * so the probe's group was empty by then. What is left in the probe's group
   * with no new leader is the probe's if it started before the reap.
   */
  private probesOwn(info: ProcessInfo, byPid: ReadonlyMap<number, ProcessInfo>): boolean {
    const group = this.probes.get(info.pgid);
    if (group && group.reapedAt === Infinity) return true;
    if (this.probes.has(info.pid) && this.probes.get(info.pid)!.reapedAt === Infinity) return true;
    if (!group || byPid.has(info.pgid)) return false;
    return info.startTime <= group.reapedAt;
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
    const all = await this.platform.listProcesses();
    const byPid = new Map<number, ProcessInfo>();
    const children = new Map<number, ProcessInfo[]>();
    const groups = new Map<number, ProcessInfo[]>();
    for (const info of all) {
      byPid.set(info.pid, info);
      push(children, info.ppid, info);
      push(groups, info.pgid, info);
    }

    // A probe reaped, with nothing left in its group: forgotten.
    for (const [pid, { reapedAt }] of this.probes) {
      if (reapedAt !== Infinity && !byPid.has(pid) && !groups.has(pid)) this.probes.delete(pid);
    }

    const { own, foreign } = await this.ownChildren(children.get(this.rootPid) ?? [], byPid);
    const roots: ProcessInfo[] = [...own];
    for (const [pid, startTime] of this.known) {
      const info = byPid.get(pid);
      if (info && info.startTime === startTime) roots.push(info);
    }
    const command = this.command;
    const now = command && byPid.get(command.pid);
    // The command as it is now (its name changes with an exec, or npm's title).
    if (now && isAlive(now) && now.startTime === command.startTime) this.command = now;
    // The session id counts only while its leader is the command seen (alive or unreaped): after
    // that the number names nothing.
    if (command && command.sid === command.pid && command.sid > 0 && now?.startTime === command.startTime) {
      // A process that double-forked out of the command's ancestry but not
      // out of its session (no setsid) is still the command's.
      for (const info of all) {
        if (info.sid === command.sid && info.startTime >= command.startTime) roots.push(info);
      }
    }

    const members: ProcessInfo[] = [];
    const seen = new Set<number>([this.rootPid]);
    const queue = roots;
    while (queue.length > 0) {
      const info = queue.pop()!;
      if (seen.has(info.pid) || this.probesOwn(info, byPid)) continue;
      seen.add(info.pid);
      members.push(info);
      const below = children.get(info.pid);
      if (below) queue.push(...below);
    }

    const alive = members.filter(isAlive);
    const joined: ProcessInfo[] = [];
    for (const info of alive) if (this.known.get(info.pid) !== info.startTime) joined.push(info);
    const left: number[] = [];
    const stays = (startTime: number, pid: number) => {
      const info = byPid.get(pid);
      return info !== undefined && info.startTime === startTime && isAlive(info);
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
    const named = this.verbose ? foreign : []; // -v names the foreign orphans too
    await this.lines.learn([...this.lines.wanted({ alive, joined }, this.verbose), ...named]);
    const leftCommands = left.filter((pid) => this.commands.delete(pid));
    return { members, alive, groups, children, joined, left, leftCommands, foreign };
  }

  /** gsup's children that are the tree's; and those newly judged not to be. */
  private async ownChildren(all: ProcessInfo[], byPid: ReadonlyMap<number, ProcessInfo>): Promise<Owned> {
    const origin = this.origin;
    if (!origin?.strict) return { own: all, foreign: [] };
    const seen = (info: ProcessInfo) =>
      this.known.get(info.pid) === info.startTime ||
      origin.nodeChildren.has(info.pid) ||
      this.probes.get(info.pid)?.reapedAt === Infinity;
    // A zombie has no environment left to read: reaped, it needs no verdict.
    const unseen = all.filter((info) => !seen(info) && isAlive(info));
    if (unseen.length === 0) return { own: all.filter(seen), foreign: [] };
    const { ours, fresh } = await origin.provenance.judge(unseen, byPid);
    return { own: all.filter((info) => seen(info) || ours.has(info.pid)), foreign: fresh };
  }
}

interface Owned {
  own: ProcessInfo[];
  foreign: ProcessInfo[];
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** At -v: who joined and who left the tree since the last look. */
export function logTreeChanges(logger: Logger, tree: ProcessTree, snapshot: Snapshot): void {
  for (const info of snapshot.joined) {
    const fields = { pid: info.pid, ppid: info.ppid, pgid: info.pgid };
    logger.info('tree-join', `pid ${info.pid} joined the tree (${tree.lines.describe(info)})`, fields);
  }
  for (const info of snapshot.foreign ?? []) {
    const message = `pid ${info.pid} (${tree.lines.describe(info)}) is not the tree's: reparented to gsup`;
    logger.info('not-ours', `${message} without the mark of its runs; reaped, never signalled`, { pid: info.pid });
  }
  const left = snapshot.left.filter((pid) => !snapshot.leftCommands.includes(pid));
  if (left.length > 0) logger.info('tree-leave', `pid ${left.join(', ')} left the tree`, { pids: left });
}
