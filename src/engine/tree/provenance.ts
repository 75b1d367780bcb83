import type { EnvironRead, Platform, ProcessInfo } from '../../platform/index.js';
import type { Judgment } from '../machine/values.js';
import { SAID_STRANGE, type Strange } from './strangers.js';

/** The variable that carries the marks of the gsups a process runs under (its own first). */
export const MARK_VARIABLE = 'GSUP_RUN';
// Marks of gsups around this one kept after its own (a gsup in a gsup in a gsup...).
const MARKS_KEPT = 8;
// A read of a process's environment that takes longer than this is not waited for.
const READ_MS = 1000;
// Reads still waiting on a process's memory (each holds a thread of libuv's pool): past this, none is started.
const SLOW_MAX = 2;
// Reads started at once (libuv's pool has four threads).
const BATCH = 4;

/** Of the candidates: the pids that are the tree's; those not judged yet (the tree's meanwhile); new judgments. */
export interface Judged {
  ours: Set<number>;
  pending: Set<number>;
  fresh: Judgment[];
}

/** What the tree knows of a process: the tree's (seen from a run, or gsup), gsup's own from before, a stranger. */
export interface Known {
  member(info: ProcessInfo): boolean;
  apart(info: ProcessInfo): boolean;
  stranger(info: ProcessInfo): Strange | undefined;
}

/** A read's answer: this gsup's mark (with the run), read and absent, unreadable (why), gone, or none yet. */
type Mark =
  | { kind: 'ours'; run: string }
  | { kind: 'absent' }
  | { kind: 'unreadable'; why: string }
  | { kind: 'gone' }
  | { kind: 'pending' };

const ABSENT: Mark = { kind: 'absent' };
const GONE: Mark = { kind: 'gone' };
const PENDING: Mark = { kind: 'pending' };

/**
 * Where a process comes from. As PID 1, gsup is sent the orphans of the
 * whole namespace, `docker exec`'s too; a process is the tree's when gsup saw
 * it descend from a run, or, first seen already reparented to gsup (its
 * parent gone before any look), when it carries this gsup's mark in its
 * environment. Each of gsup's runs (and probes, and `pm2 kill`) is started
 * with the mark, and processes inherit it.
 *
 * When the mark cannot be read (a process of another user, and gsup without
 * CAP_SYS_PTRACE: Docker's default), the tree wins: such an orphan is the
 * tree's unless gsup can show it is not — it started before gsup first
 * started anything with the mark, or it is in the session of a process that
 * is not the tree's (every member of a session descends from its leader).
 * Its user proves nothing: apps drop privileges (gosu, su-exec, setpriv).
 */
export class Provenance {
  /** Unique to this gsup (collisions, not forgery, are what it must avoid: no secret). */
  readonly token: string;
  /**
   * Judgments on gsup's children, by pid (undefined: reaped). As PID 1 an orphan is judged and reaped every few
   * ms: these are a new Map when some go, never deleted from (V8 gives a Map that fills and empties a new table
   * every few entries, in the old generation once the Map is there).
   */
  private judgments = new Map<number, Judgment | undefined>();
  /** Judgments on the leaders of their sessions (any process). */
  private leaders = new Map<number, Judgment | undefined>();
  /** Pids whose read is slow (over READ_MS, not answered yet). */
  private readonly slow = new Set<number>();
  /** A start time before which no process gsup started with the mark exists (set at the first such environment). */
  private before?: number;

  constructor(
    private readonly platform: Platform,
    token?: string,
  ) {
    this.token = token ?? `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
  }

  /** The environment of something gsup starts (`what`: a run's number, `health`, `pm2`): this gsup's mark first. */
  env(base: NodeJS.ProcessEnv, what: number | string): NodeJS.ProcessEnv {
    // Start times are whole ticks (a process started later in this one has it too): one tick less is certain.
    this.before ??= this.platform.startTimeNow() - 1;
    const around = (base[MARK_VARIABLE] ?? '').split(' ').filter((mark) => mark !== '' && !this.ours(mark));
    return { ...base, [MARK_VARIABLE]: [`${this.token}.${what}`, ...around.slice(0, MARKS_KEPT - 1)].join(' ') };
  }

  private ours(mark: string): boolean {
    return mark.startsWith(`${this.token}.`);
  }

  /**
   * Judges these processes (alive children of gsup that no look saw descend from a run), each once: a stranger
   * (Strangers) at once, else by its mark, read a few at a time. `current`: every process now (to forget the
   * judgments on those gone, and to find session leaders). A process whose read takes over READ_MS, or fails for
   * now, has no judgment yet: it is pending, the tree's until its read answers.
   */
  async judge(candidates: readonly ProcessInfo[], current: ReadonlyMap<number, ProcessInfo>, tree: Known) {
    this.judgments = present(this.judgments, current);
    this.leaders = present(this.leaders, current);
    const judged: Judged = { ours: new Set(), pending: new Set(), fresh: [] };
    const judge = (info: ProcessInfo, ours: boolean, why: Judgment['why'], detail?: string) => {
      const judgment: Judgment = { info, ours, why, detail };
      this.judgments.set(info.pid, judgment);
      judged.fresh.push(judgment);
    };
    const toRead: ProcessInfo[] = [];
    for (const info of candidates) {
      if (known(this.judgments, info)) continue;
      const stranger = tree.stranger(info);
      if (stranger) judge(info, false, stranger.why, stranger.detail);
      else if (this.startedBefore(info)) judge(info, false, 'before');
      else if (this.slow.has(info.pid)) judged.pending.add(info.pid);
      else toRead.push(info);
    }
    const marks = await this.marks(toRead);
    const unreadable: Array<{ info: ProcessInfo; why: string }> = [];
    toRead.forEach((info, index) => {
      const mark = marks[index];
      // Gone since the look listed it (a daemon's first fork, exiting): what it left comes to gsup unjudged, so the
      // tree's meanwhile, and judged at the next look.
      if (mark.kind === 'pending' || mark.kind === 'gone') judged.pending.add(info.pid);
      else if (mark.kind === 'ours') judge(info, true, 'mark', mark.run);
      else if (mark.kind === 'absent') judge(info, false, 'absent');
      else if (mark.kind === 'unreadable') unreadable.push({ info, why: mark.why });
    });
    // Unreadable: the tree's, unless its session's leader is shown not to be (a session's members descend from it).
    const leaders = new Map<number, ProcessInfo>();
    for (const { info } of unreadable) {
      const leader = this.leaderOf(info, current, tree);
      if (leader && this.leaderJudgment(leader, tree) === undefined) leaders.set(leader.pid, leader);
    }
    const leaderMarks = await this.marks([...leaders.values()]);
    const waiting = new Set<number>();
    [...leaders.values()].forEach((leader, index) => this.judgeLeader(leader, leaderMarks[index], waiting));
    for (const { info, why } of unreadable) {
      const leader = this.leaderOf(info, current, tree);
      if (leader && waiting.has(leader.pid)) judged.pending.add(info.pid);
      else if (leader && this.leaderJudgment(leader, tree) === false)
        judge(info, false, 'session', `${why}; pid ${leader.pid}`);
      else judge(info, true, 'unreadable', why);
    }
    for (const info of candidates) if (known(this.judgments, info)?.ours) judged.ours.add(info.pid);
    return judged;
  }

  private startedBefore(info: ProcessInfo): boolean {
    return this.before !== undefined && info.startTime < this.before;
  }

  /**
   * The alive leader of the session this process is in, when it can say
   * something: not the process itself, not gsup or a member of the tree (a
   * child in `child` mode shares gsup's session). The kernel gives no
   * process a pid still in use as a session id: a live process with that pid
   * that leads a session leads this one.
   */
  private leaderOf(info: ProcessInfo, current: ReadonlyMap<number, ProcessInfo>, tree: Known) {
    if (info.sid === info.pid || info.sid <= 0) return undefined;
    const leader = current.get(info.sid);
    if (!leader || leader.sid !== leader.pid || leader.state === 'Z' || tree.member(leader)) return undefined;
    return leader;
  }

  /** Whether the leader is the tree's (true), shown not to be (false), or not known. */
  private leaderJudgment(leader: ProcessInfo, tree: Known): boolean | undefined {
    // A session's members descend from its leader: one that entered from outside leads no member of the tree.
    if (tree.apart(leader) || this.startedBefore(leader) || tree.stranger(leader)?.why === 'entered') return false;
    return (known(this.judgments, leader) ?? known(this.leaders, leader))?.ours;
  }

  /** A leader's judgment, kept (not said: it is no child of gsup's); one read unreadable is taken for the tree's. */
  private judgeLeader(leader: ProcessInfo, mark: Mark, waiting: Set<number>): void {
    if (mark.kind === 'pending') waiting.add(leader.pid);
    else if (mark.kind === 'ours' || mark.kind === 'absent' || mark.kind === 'unreadable')
      this.leaders.set(leader.pid, {
        info: leader,
        ours: mark.kind !== 'absent',
        why: mark.kind === 'ours' ? 'mark' : mark.kind,
      });
  }

  /** The run whose mark each of these processes carries (pid → run; those without one, or unread, left out). */
  async runMarks(infos: readonly ProcessInfo[]): Promise<Map<number, number>> {
    const marks = await this.marks(infos);
    const runs = new Map<number, number>();
    infos.forEach((info, index) => {
      const mark = marks[index];
      if (mark.kind === 'ours' && /^\d+$/.test(mark.run)) runs.set(info.pid, Number(mark.run));
    });
    return runs;
  }

  /** The marks of these processes, a batch at a time. */
  private async marks(infos: readonly ProcessInfo[]): Promise<Mark[]> {
    const marks: Mark[] = [];
    for (let start = 0; start < infos.length; start += BATCH)
      marks.push(...(await Promise.all(infos.slice(start, start + BATCH).map((info) => this.mark(info.pid)))));
    return marks;
  }

  /** This process's mark; pending: not known yet (its read is slow or failed, or others are slow). */
  private async mark(pid: number): Promise<Mark> {
    const read = this.platform.environValue;
    // No way to read it (not Linux): as before there were marks, a child of gsup is the tree's.
    if (!read) return { kind: 'ours', run: '?' };
    if (this.slow.size >= SLOW_MAX) return PENDING;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), READ_MS)).unref());
    const reading = read.call(this.platform, pid, MARK_VARIABLE);
    const result = await Promise.race([reading, late]);
    clearTimeout(timer);
    if (result === 'late') {
      this.slow.add(pid);
      const done = () => void this.slow.delete(pid);
      reading.then(done, done);
      return PENDING;
    }
    return this.markOf(result);
  }

  private markOf(result: EnvironRead): Mark {
    switch (result.found) {
      case 'value': {
        const mark = result.value.split(' ').find((each) => this.ours(each));
        return mark ? { kind: 'ours', run: mark.slice(this.token.length + 1) } : ABSENT;
      }
      case 'absent':
        return ABSENT;
      case 'unreadable':
        return { kind: 'unreadable', why: result.why };
      case 'gone':
        return GONE; // gone since the look listed it: no judgment, and nothing known of what it left
      default:
        return PENDING; // failed for now (no fd left): read again at the next look
    }
  }

  /** A child of gsup was reaped: its judgment goes; true when it was not the tree's (nor is its status). */
  reaped(pid: number): boolean {
    const judgment = this.judgments.get(pid);
    if (!judgment) return false;
    this.judgments.set(pid, undefined); // the next judge() drops it
    return !judgment.ours;
  }
}

/** The judgments on processes still there (same start time): the same Map when all are, else a new one. */
function present(
  map: Map<number, Judgment | undefined>,
  current: ReadonlyMap<number, ProcessInfo>,
): Map<number, Judgment | undefined> {
  const there = (judgment: Judgment | undefined, pid: number) =>
    judgment !== undefined && current.get(pid)?.startTime === judgment.info.startTime;
  let kept = 0;
  map.forEach((judgment, pid) => there(judgment, pid) && kept++);
  if (kept === map.size) return map;
  const next = new Map<number, Judgment | undefined>();
  map.forEach((judgment, pid) => there(judgment, pid) && next.set(pid, judgment));
  return next;
}

/** The judgment on this very process (same start time), if any. */
function known(map: ReadonlyMap<number, Judgment | undefined>, info: ProcessInfo): Judgment | undefined {
  const judgment = map.get(info.pid);
  return judgment?.info.startTime === info.startTime ? judgment : undefined;
}

/** How -v says a judgment on a process (`name`: its command line). */
export function sayJudgment(judgment: Judgment, name: string): string {
  const { info, ours, why, detail } = judgment;
  const said = `pid ${info.pid} (${name}) ${ours ? 'is' : 'is not'} the tree's: ${SAID[why](detail)}`;
  return ours || why === 'own' || why in SAID_STRANGE ? said : `${said}; reaped, never signalled`;
}

// Why, as -v says it (`detail`: the run; the errno, and the session's leader).
const SAID: Record<Judgment['why'], (detail?: string) => string> = {
  mark: (run) => `reparented to gsup, it carries the mark of run ${run}`,
  absent: () => 'reparented to gsup without the mark of its runs (read: absent)',
  unreadable: (why = '') =>
    /^E[A-Z]+$/.test(why)
      ? `reparented to gsup, its mark cannot be read (${why}: another user's, and gsup lacks CAP_SYS_PTRACE), ` +
        'and nothing shows it is not'
      : `reparented to gsup, its mark cannot be read (its environment ${why}: a daemon that sets its title, ` +
        "as perl's $0, nginx or setproctitle do), and nothing shows it is not",
  before: () => 'reparented to gsup, it started before gsup first started anything',
  session: (detail) => {
    const [errno, leader] = (detail ?? '').split('; ');
    return `its mark cannot be read (${errno}), and it is in the session of ${leader}, which is not the tree's`;
  },
  ...SAID_STRANGE,
  own: (from) =>
    from
      ? `started by ${from}, gsup's own child from before its first spawn (a preload's): never waited for, nor its ` +
        'status taken'
      : "gsup's own child from before its first spawn (a preload's): never waited for, nor its status taken",
};
