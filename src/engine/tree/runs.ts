import { isAlive, type ProcessInfo } from '../../platform/index.js';
import type { Judgment } from '../machine/values.js';

/** A run as the tree knows it: its command's pid, the tick it was spawned at, its command as last seen alive. */
interface RunCommand {
  readonly pid: number;
  readonly spawnedAt: number;
  info: ProcessInfo | undefined;
  /** gsup reaped it: its pid and session id name no run's command any more. */
  reaped?: boolean;
}

/** What a look gives the attribution: its members, every process by pid and by parent, and its judgments. */
export interface Seen {
  readonly members: readonly ProcessInfo[];
  readonly byPid: ReadonlyMap<number, ProcessInfo>;
  readonly judgments: readonly Judgment[];
  /** Marks read for the look (not as PID 1: the tree's own orphans no look saw descend), pid → run. */
  readonly marks?: ReadonlyMap<number, number>;
}

/**
 * Which run each member of the tree is of, while two runs live (a reload): the
 * old run's tree is retired alone, and nothing of the new one with it. A
 * process is run N's when it descends from run N's command; else when it is
 * in the session its command leads (a double fork without setsid), or carries
 * run N's mark; else by when it started (the last run spawned before it: an
 * orphan whose mark cannot be read is the old run's when it started before
 * the new run's spawn). Once known, a process keeps its run wherever it is
 * reparented (pid and start time). With one run, nothing is kept: every
 * member is that run's.
 */
export class RunAttribution {
  private readonly runs = new Map<number, RunCommand>();
  /** pid → start time and run, for the members of the last look. */
  private known = new Map<number, { startTime: number; run: number }>();

  constructor(private readonly rootPid: number) {}

  /** Run `run` was spawned (its command `pid`), at this tick. */
  started(run: number, pid: number, spawnedAt: number): void {
    this.runs.set(run, { pid, spawnedAt, info: undefined });
  }

  /** Its command, as read after its spawn (and as each look sees it, alive); false once reaped (read too late). */
  commandRead(run: number, info: ProcessInfo): boolean {
    const entry = this.runs.get(run);
    if (!entry || entry.pid !== info.pid || entry.reaped) return false;
    entry.info = info;
    return true;
  }

  /** gsup reaped this pid: a run's command by it is gone, and what holds it next is no run's by that. */
  reaped(pid: number): void {
    for (const entry of this.runs.values()) if (entry.pid === pid) entry.reaped = true;
    this.known.delete(pid);
  }

  /** The runs that still live; the others are forgotten. */
  live(runs: readonly number[]): void {
    for (const run of this.runs.keys()) if (!runs.includes(run)) this.runs.delete(run);
    if (this.runs.size < 2) this.known.clear();
  }

  /** Its command as last seen. */
  commandOf(run: number): ProcessInfo | undefined {
    return this.runs.get(run)?.info;
  }

  /** Not attributed before (nor a run's command). */
  unknown(info: ProcessInfo): boolean {
    if (this.known.get(info.pid)?.startTime === info.startTime) return false;
    for (const entry of this.runs.values()) if (entry.pid === info.pid) return false;
    return true;
  }

  /** Whether two runs live: only then are members told apart. */
  get active(): boolean {
    return this.runs.size > 1;
  }

  /** Each live run's command as last seen, while it is the same process (alive or unreaped). */
  commands(byPid: ReadonlyMap<number, ProcessInfo>): ProcessInfo[] {
    const found: ProcessInfo[] = [];
    for (const entry of this.runs.values()) {
      const now = entry.info && !entry.reaped && byPid.get(entry.pid);
      if (!now || now.startTime !== entry.info!.startTime) continue;
      if (isAlive(now)) entry.info = now;
      found.push(entry.info!);
    }
    return found;
  }

  /** Each member's run (pid → run id), or undefined with fewer than two runs. */
  attribute(seen: Seen): Map<number, number> | undefined {
    if (!this.active) return undefined;
    const runOf = new Map<number, number>();
    const members = new Map(seen.members.map((info) => [info.pid, info]));
    // Known before; each run's command; a mark read (a judgment's, as PID 1, or read for this look).
    for (const info of seen.members) {
      const known = this.known.get(info.pid);
      if (known?.startTime === info.startTime) runOf.set(info.pid, known.run);
    }
    for (const [run, entry] of this.runs) {
      const info = entry.info && !entry.reaped && members.get(entry.pid);
      if (info && info.startTime === entry.info!.startTime && !runOf.has(info.pid)) runOf.set(info.pid, run);
    }
    for (const judgment of seen.judgments) {
      const run = Number(judgment.why === 'mark' ? judgment.detail : NaN);
      if (this.runs.has(run) && !runOf.has(judgment.info.pid)) runOf.set(judgment.info.pid, run);
    }
    for (const [pid, run] of seen.marks ?? []) if (this.runs.has(run) && !runOf.has(pid)) runOf.set(pid, run);
    // The rest: its parent's run (walked up, iteratively), else its session's, else by when it started.
    for (const info of seen.members) {
      if (runOf.has(info.pid)) continue;
      const chain: ProcessInfo[] = [];
      const walked = new Set<number>();
      let at: ProcessInfo | undefined = info;
      while (at && !runOf.has(at.pid) && !walked.has(at.pid)) {
        chain.push(at);
        walked.add(at.pid);
        at = at.ppid === this.rootPid ? undefined : members.get(at.ppid);
      }
      const top = chain[chain.length - 1];
      const run = at && runOf.has(at.pid) ? runOf.get(at.pid)! : (this.sessionOf(top, seen.byPid) ?? this.byStart(top));
      for (const each of chain) runOf.set(each.pid, run);
    }
    this.known = new Map();
    for (const info of seen.members) this.known.set(info.pid, { startTime: info.startTime, run: runOf.get(info.pid)! });
    return runOf;
  }

  /** The run whose command leads this process's session, when that command is alive and started first. */
  private sessionOf(info: ProcessInfo, byPid: ReadonlyMap<number, ProcessInfo>): number | undefined {
    for (const [run, entry] of this.runs) {
      const command = !entry.reaped && entry.info;
      if (!command || command.sid !== command.pid || info.sid !== command.sid) continue;
      if (byPid.get(command.pid)?.startTime === command.startTime && info.startTime >= command.startTime) return run;
    }
    return undefined;
  }

  /** The last run spawned before it started (start times are whole ticks: a tie is the later run's). */
  private byStart(info: ProcessInfo): number {
    let best: number | undefined;
    let first: number | undefined;
    for (const [run, entry] of this.runs) {
      if (first === undefined || run < first) first = run;
      if (entry.spawnedAt <= info.startTime && (best === undefined || run > best)) best = run;
    }
    return best ?? first!;
  }
}
