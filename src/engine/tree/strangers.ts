import type { Platform, ProcessInfo } from '../../platform/index.js';
import type { Judgment } from '../machine/values.js';

/** Why a process is never the tree's: it entered from outside or gsup may not signal it. */
export interface Strange {
  why: 'entered' | 'denied';
  /** `parent` or `session` (how an entrant is seen), or the pid of the entrant it descends from. */
  detail?: string;
}

const DENIED: Strange = { why: 'denied' };

/**
 * Processes that are never the tree's, whatever else is seen of them. As PID
 * 1, a process that entered gsup's PID namespace from outside (`docker exec`,
 * `kubectl exec`, `nsenter`) has parent pid 0 there, and, where gsup's own
 * session began inside the namespace, a session that began outside shows as
 * session id 0: those and what descends from them are remembered (pid and
 * start time) from the first look that sees them, so that once orphaned to
 * gsup they stay strangers. What was orphaned before any look saw it, in a
 * session of its own, cannot be told: the tree wins (docs/limits.md). And a
 * process gsup has no permission to signal is never waited for: judged once,
 * by the kernel's answer to signal 0, where gsup cannot signal everyone.
 */
export class Strangers {
  /** pid → its start time and how it was seen: an entrant (`parent`, `session`), or the entrant's pid it is below. */
  private entered = new Map<number, { startTime: number; from: string }>();
  /** pid → start time of those gsup may not signal. */
  private denied = new Map<number, number>();

  constructor(
    private readonly platform: Platform,
    private readonly rootPid: number,
    /** gsup is PID 1 of its namespace: a parent pid 0 there is outside it. */
    private readonly strict: boolean,
  ) {}

  /** One look's processes: the entrants and what descends from them, remembered; the judgments on new entrants. */
  see(
    all: readonly ProcessInfo[],
    byPid: ReadonlyMap<number, ProcessInfo>,
    children: ReadonlyMap<number, ProcessInfo[]>,
  ): Judgment[] {
    this.entered = present(this.entered, byPid);
    this.denied = present(this.denied, byPid);
    const fresh: Judgment[] = [];
    if (!this.strict) return fresh;
    // Session id 0 says "outside" only where gsup's own session is inside (as a runtime's setsid makes it).
    const sessionInside = (byPid.get(this.rootPid)?.sid ?? 0) > 0;
    for (const info of all) {
      if (info.pid === this.rootPid || (info.ppid !== 0 && !(sessionInside && info.sid === 0))) continue;
      // Said once, when first seen (not already seen below another entrant).
      const how = info.ppid === 0 ? 'parent' : 'session';
      if (this.entered.get(info.pid)?.startTime !== info.startTime)
        fresh.push({ info, ours: false, why: 'entered', detail: how });
      // What descends from it, walked each look (it forks on): kept with the entrant it was first seen below.
      const below = [info];
      for (let each = below.pop(); each; each = below.pop()) {
        if (this.entered.get(each.pid)?.startTime !== each.startTime)
          this.entered.set(each.pid, { startTime: each.startTime, from: each === info ? how : String(info.pid) });
        const next = children.get(each.pid);
        if (next) below.push(...next);
      }
    }
    return fresh;
  }

  /** Why this process is never the tree's, if it is not. */
  stranger(info: ProcessInfo): Strange | undefined {
    const entered = this.entered.get(info.pid);
    if (entered?.startTime === info.startTime) return { why: 'entered', detail: entered.from };
    return this.mayNotSignal(info) ? DENIED : undefined;
  }

  /** gsup may not signal this process: judged once while it lives. `said`: where a first judgment is told (-v). */
  mayNotSignal(info: ProcessInfo, said?: Judgment[]): boolean {
    if (this.denied.get(info.pid) === info.startTime) return true;
    if (!this.platform.signalDenied?.(info.pid)) return false;
    this.denied.set(info.pid, info.startTime);
    said?.push({ info, ours: false, why: 'denied' });
    return true;
  }
}

/** The entries whose process is still there (same start time): the same Map when all are, else a new one. */
function present<V extends number | { startTime: number }>(
  map: Map<number, V>,
  current: ReadonlyMap<number, ProcessInfo>,
): Map<number, V> {
  const there = (value: V, pid: number) =>
    current.get(pid)?.startTime === (typeof value === 'number' ? value : value.startTime);
  let kept = 0;
  map.forEach((value, pid) => there(value, pid) && kept++);
  if (kept === map.size) return map;
  const next = new Map<number, V>();
  map.forEach((value, pid) => there(value, pid) && next.set(pid, value));
  return next;
}

/** How -v says why a process is never the tree's (`detail`: how an entrant was seen, or the entrant it is below). */
export const SAID_STRANGE: Record<Strange['why'], (detail?: string) => string> = {
  entered: (detail) =>
    detail === 'parent'
      ? "it entered gsup's PID namespace from outside (seen with parent pid 0 there: docker exec, kubectl exec, " +
        'nsenter): neither it nor what it starts is ever signalled or waited for'
      : detail === 'session'
        ? "its session began outside gsup's PID namespace (session id 0 there: docker exec, kubectl exec, nsenter): " +
          'neither it nor what it starts is ever signalled or waited for'
        : `it descends from pid ${detail}, which entered gsup's PID namespace from outside: never signalled or ` +
          'waited for',
  denied: () =>
    "gsup may not signal it (EPERM: another user's, and gsup lacks CAP_KILL): never waited for, nor counted",
};
