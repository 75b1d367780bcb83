import type { Platform, ProcessInfo, SignalName } from '../../platform/index.js';
import type { Relayers } from './relayers.js';
import { membersOf, restrictTargets, type Target } from '../machine/ledger.js';

/**
 * One signal to planned targets, each through its identity (never a bare
 * number a look saw): a group with one signal through its leader, checked
 * alive, the same and still leading it (the kernel signals through a pidfd
 * the group whose id is that process's pid: no other member can stand for
 * it); a process, or a group whose leader is gone or cannot, one by one.
 */
export function send(platform: Platform, targets: readonly Target[], signal: SignalName): void {
  const single: ProcessInfo[] = [];
  for (const target of targets) {
    if (target.kind === 'process') {
      single.push(target.process);
      continue;
    }
    const leader = target.members.find((info) => info.pid === target.pgid);
    if (!leader || !platform.signalGroup(leader, signal)) single.push(...target.members);
  }
  if (single.length > 0) platform.signalProcesses(single, signal);
}

/**
 * A stop signal to planned targets: a relayer (tsx) whose child is a target
 * is left out, so that its child gets the signal once, from gsup alone.
 */
export function deliver(platform: Platform, targets: Target[], signal: SignalName, relayers?: Relayers): void {
  const members = targets.flatMap(membersOf);
  const skipped = new Set(relayers?.toSkip(members, signal).map((info) => info.pid));
  if (skipped.size > 0)
    targets = restrictTargets(targets, new Set(members.map((info) => info.pid).filter((pid) => !skipped.has(pid))));
  send(platform, targets, signal);
}
