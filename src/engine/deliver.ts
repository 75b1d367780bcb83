import type { Platform, SignalName } from '../platform/index.js';
import { membersOf, restrictTargets, type Target } from './plan.js';
import type { Relayers } from './relayers.js';

/**
 * Sends one signal to planned targets: a group with one kill(-pgid), a
 * process by pid. Wrappers that relay stop signals themselves (tsx) get it
 * first, alone, and the rest only once their handler has run (bounded).
 */
export async function deliver(platform: Platform, targets: Target[], signal: SignalName, relayers?: Relayers): Promise<void> {
  const first = relayers?.find(targets.flatMap(membersOf), signal) ?? [];
  if (first.length > 0) {
    await relayers!.signalFirst(first, signal);
    const done = new Set(first.map((info) => info.pid));
    const rest = new Set(targets.flatMap(membersOf).map((info) => info.pid).filter((pid) => !done.has(pid)));
    targets = restrictTargets(targets, rest);
  }
  for (const target of targets) platform.kill(target.kind === 'group' ? -target.pgid : target.process.pid, signal);
}
