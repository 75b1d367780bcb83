import type { ProcessInfo } from '../platform/index.js';
import type { TreeSnapshot } from './tree.js';

/** One kill(2) call: a whole process group, or one process. */
export type Target = { kind: 'group'; pgid: number; members: ProcessInfo[] } | { kind: 'process'; process: ProcessInfo };

export type TargetMode = 'group' | 'child' | 'tree';
export const TARGET_MODES: readonly TargetMode[] = ['group', 'child', 'tree'];

/** Where a forwarded signal goes, given what the tree looks like now. */
export interface TargetSelector {
  select(snapshot: TreeSnapshot, commandPid: number | undefined): Target[];
}

/**
 * Each process group of the tree once, the way a terminal delivers Ctrl+C to
 * a foreground job. A group is signalled as a group only when every process
 * in it is ours (never gsup's own group): otherwise its members one by one.
 */
export class GroupTargets implements TargetSelector {
  constructor(private readonly ownPgid: number) {}

  select(snapshot: TreeSnapshot): Target[] {
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
      const allOurs = pgid !== this.ownPgid && pgid > 0 && whole.every((info) => memberPids.has(info.pid));
      if (allOurs) targets.push({ kind: 'group', pgid, members });
      else for (const process of members) targets.push({ kind: 'process', process });
    }
    return targets;
  }
}

/** The direct child only (like tini without -g); once it is gone, what is left, by group. */
export class ChildTargets implements TargetSelector {
  constructor(private readonly fallback: TargetSelector) {}

  select(snapshot: TreeSnapshot, commandPid: number | undefined): Target[] {
    const child = snapshot.alive.find((info) => info.pid === commandPid);
    return child ? [{ kind: 'process', process: child }] : this.fallback.select(snapshot, commandPid);
  }
}

/** Every process of the tree, one by one. */
export class TreeTargets implements TargetSelector {
  select(snapshot: TreeSnapshot): Target[] {
    return snapshot.alive.map((process): Target => ({ kind: 'process', process }));
  }
}

export function targetSelector(mode: TargetMode, ownPgid: number): TargetSelector {
  const groups = new GroupTargets(ownPgid);
  if (mode === 'child') return new ChildTargets(groups);
  if (mode === 'tree') return new TreeTargets();
  return groups;
}

export function describeTargets(targets: Target[]): string {
  return targets
    .map((target) => (target.kind === 'group' ? `group ${target.pgid} (${target.members.length})` : `pid ${target.process.pid}`))
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

/** Every pid a list of targets reaches. */
export function reachedPids(targets: Target[]): Set<number> {
  const pids = new Set<number>();
  for (const target of targets) {
    if (target.kind === 'process') pids.add(target.process.pid);
    else for (const info of target.members) pids.add(info.pid);
  }
  return pids;
}
