import type { Platform, ProcessInfo, SignalName } from '../platform/index.js';
import { membersOf, restrictTargets, type Target } from './plan.js';
import type { Relayers } from './relayers.js';

/**
 * One signal to planned targets, each through its identity (never a bare
 * number a look saw): a group with one signal through its leader, checked
 * alive and the same; a group whose leader is gone, and a process, one by one.
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
 * Sends one signal to planned targets. Wrappers that relay stop signals
 * themselves (tsx) get it first, alone, and the rest only once their handler
 * has run (bounded).
 */
export async function deliver(platform: Platform, targets: Target[], signal: SignalName, relayers?: Relayers): Promise<void> {
  const first = relayers?.find(targets.flatMap(membersOf), signal) ?? [];
  if (first.length > 0) {
    await relayers!.signalFirst(first, signal);
    const done = new Set(first.map((info) => info.pid));
    const rest = new Set(targets.flatMap(membersOf).map((info) => info.pid).filter((pid) => !done.has(pid)));
    targets = restrictTargets(targets, rest);
  }
  send(platform, targets, signal);
}
