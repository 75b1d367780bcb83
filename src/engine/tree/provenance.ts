import type { Platform, ProcessInfo } from '../../platform/index.js';

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

/** Of the candidates: the pids of those that carry the mark; those judged now not to. */
interface Judged {
  ours: Set<number>;
  fresh: ProcessInfo[];
}

/**
 * Where a process comes from. As PID 1, gsup is sent the orphans of the
 * whole namespace, `docker exec`'s too; a process is the tree's when gsup saw
 * it descend from a run, or, first seen already reparented to gsup (its
 * parent gone before any look), when it carries this gsup's mark in its
 * environment. Each of gsup's runs (and probes, and `pm2 kill`) is started
 * with the mark, and processes inherit it.
 */
export class Provenance {
  /** Unique to this gsup (collisions, not forgery, are what it must avoid: no secret). */
  readonly token: string;
  private readonly verdicts = new Map<number, { startTime: number; ours: boolean }>();
  /** Pids whose read is slow (over READ_MS, not answered yet). */
  private readonly slow = new Set<number>();

  constructor(
    private readonly platform: Platform,
    token?: string,
  ) {
    this.token = token ?? `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
  }

  /** The environment of something gsup starts (`what`: a run's number, `health`, `pm2`): this gsup's mark first. */
  env(base: NodeJS.ProcessEnv, what: number | string): NodeJS.ProcessEnv {
    const around = (base[MARK_VARIABLE] ?? '').split(' ').filter((mark) => mark !== '' && !this.ours(mark));
    return { ...base, [MARK_VARIABLE]: [`${this.token}.${what}`, ...around.slice(0, MARKS_KEPT - 1)].join(' ') };
  }

  private ours(mark: string): boolean {
    return mark.startsWith(`${this.token}.`);
  }

  /**
   * Which of these processes (alive children of gsup that no look saw
   * descend from a run) carry the mark: each read once, a few at a time. A
   * process that cannot be read is not the tree's; one whose read takes over
   * READ_MS is not either, until the read answers (asked again then).
   * `current`: every process now, to forget the verdicts on those gone.
   */
  async judge(candidates: readonly ProcessInfo[], current: ReadonlyMap<number, ProcessInfo>): Promise<Judged> {
    const verdicts = this.verdicts;
    for (const [pid, { startTime }] of verdicts) if (current.get(pid)?.startTime !== startTime) verdicts.delete(pid);
    const judged = (info: ProcessInfo) => verdicts.get(info.pid)?.startTime === info.startTime;
    const open = candidates.filter((info) => !judged(info) && !this.slow.has(info.pid));
    const fresh: ProcessInfo[] = [];
    for (let start = 0; start < open.length; start += BATCH) {
      const batch = open.slice(start, start + BATCH);
      const marks = await Promise.all(batch.map((info) => this.marked(info.pid)));
      batch.forEach((info, index) => {
        const ours = marks[index];
        if (ours === undefined) return;
        verdicts.set(info.pid, { startTime: info.startTime, ours });
        if (!ours) fresh.push(info);
      });
    }
    const ours = candidates.filter((info) => judged(info) && verdicts.get(info.pid)!.ours);
    return { ours: new Set(ours.map((info) => info.pid)), fresh };
  }

  /** Does this process carry the mark? Undefined: not known yet (its read, or too many others, are slow). */
  private async marked(pid: number): Promise<boolean | undefined> {
    const read = this.platform.environValue;
    // No way to read it (not Linux): as before there were marks, a child of gsup is the tree's.
    if (!read) return true;
    if (this.slow.size >= SLOW_MAX) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), READ_MS)).unref());
    const reading = read.call(this.platform, pid, MARK_VARIABLE);
    const value = await Promise.race([reading, late]);
    clearTimeout(timer);
    if (value === 'late') {
      this.slow.add(pid);
      const done = () => void this.slow.delete(pid);
      reading.then(done, done);
      return undefined;
    }
    return (value ?? '').split(' ').some((mark) => this.ours(mark));
  }
}
