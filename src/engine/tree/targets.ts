import type { ProcessInfo } from '../../platform/index.js';
import type { TreeSnapshot } from './tree.js';

// Who gets a signal: pure functions of a snapshot, no process touched.

/** One kill(2) call: a whole process group, or one process. */
export type Target =
  { kind: 'group'; pgid: number; members: ProcessInfo[] } | { kind: 'process'; process: ProcessInfo };

export type TargetMode = 'group' | 'child' | 'tree';
export const TARGET_MODES: readonly TargetMode[] = ['group', 'child', 'tree'];

/**
 * The tree cut into what one kill(2) reaches: each process group of the tree
 * as one target when every process in it is ours (never gsup's own group),
 * else its members one by one. The way a terminal delivers Ctrl+C to a job.
 */
export function units(snapshot: TreeSnapshot, ownPgid: number): Target[] {
  const memberPids = new Set(snapshot.members.map((info) => info.pid));
  const byGroup = new Map<number, ProcessInfo[]>();
  for (const info of snapshot.alive) {
    const list = byGroup.get(info.pgid);
    if (list) list.push(info);
    else byGroup.set(info.pgid, [info]);
  }
  const targets: Target[] = [];
  for (const [pgid, members] of byGroup) {
    const whole = snapshot.groups.get(pgid) ?? [];
    const allOurs = pgid !== ownPgid && pgid > 0 && whole.every((info) => memberPids.has(info.pid));
    if (allOurs) targets.push({ kind: 'group', pgid, members });
    else for (const process of members) targets.push({ kind: 'process', process });
  }
  return targets;
}

/**
 * Where a forwarded signal goes. `tree`: every process, one by one.
 * Otherwise the roots: the units none of whose members has a live parent in
 * the tree outside the unit. A group whose parent lives belongs to that
 * parent (a nested gsup, tini, dumb-init, a shell, a browser's launcher),
 * which forwards for itself; what the parent left behind is reparented to
 * gsup or init and becomes a root. In `child` mode the command stays in
 * gsup's group, so it is a unit of its own, and the processes it started are
 * not roots while it lives.
 */
export function roots(snapshot: TreeSnapshot, mode: TargetMode, ownPgid: number): Target[] {
  if (mode === 'tree') return snapshot.alive.map((process): Target => ({ kind: 'process', process }));
  const all = units(snapshot, ownPgid);
  const unitOf = new Map<number, Target>();
  for (const unit of all) for (const info of membersOf(unit)) unitOf.set(info.pid, unit);
  return all.filter((unit) =>
    membersOf(unit).every((info) => {
      const parent = unitOf.get(info.ppid);
      return parent === undefined || parent === unit;
    }),
  );
}

export function membersOf(target: Target): ProcessInfo[] {
  return target.kind === 'group' ? target.members : [target.process];
}

/** A process as one identity: a reused pid is another process. */
export function processKey(info: ProcessInfo): string {
  return `${info.pid}:${info.startTime}`;
}

/**
 * The part of `targets` that has not been reached yet: a unit none of whose
 * members was reached stays whole, one partly reached becomes its other
 * members one by one (a process that was signalled in its old group and then
 * left it must not get the same signal twice).
 */
export function unreached(targets: Target[], reached: ReadonlySet<string>): Target[] {
  return targets.flatMap((target): Target[] => {
    const members = membersOf(target);
    const fresh = members.filter((info) => !reached.has(processKey(info)));
    if (fresh.length === members.length) return [target];
    return fresh.map((process): Target => ({ kind: 'process', process }));
  });
}

export function describeTargets(targets: Target[]): string {
  return targets
    .map((target) =>
      target.kind === 'group' ? `group ${target.pgid} (${target.members.length})` : `pid ${target.process.pid}`,
    )
    .join(', ');
}

/** Keeps only the processes in `only`; a group with others in it becomes its wanted members, one by one. */
export function restrictTargets(targets: Target[], only: ReadonlySet<number>): Target[] {
  return targets.flatMap((target): Target[] => {
    if (target.kind === 'process') return only.has(target.process.pid) ? [target] : [];
    if (target.members.every((info) => only.has(info.pid))) return [target];
    return target.members.filter((info) => only.has(info.pid)).map((process): Target => ({ kind: 'process', process }));
  });
}
