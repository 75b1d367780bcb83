import type { ProcessInfo } from '../../platform/index.js';
import { membersOf, type Target } from '../machine/ledger/ledger.js';
import type { Snapshot } from '../machine/values.js';

// Who gets a signal: pure functions of a snapshot, no process touched. (What a target is, and who has had the
// stop signal, is the machine's: machine/ledger/ledger.ts.)

export type TargetMode = 'group' | 'child' | 'tree';
export const TARGET_MODES: readonly TargetMode[] = ['group', 'child', 'tree'];

/**
 * The tree cut into what one kill(2) reaches: each process group of the tree
 * as one target when every process in it is ours (never gsup's own group),
 * else its members one by one. The way a terminal delivers Ctrl+C to a job.
 */
export function units(snapshot: Snapshot, ownPgid: number): Target[] {
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
export function roots(snapshot: Snapshot, mode: TargetMode, ownPgid: number): Target[] {
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
