import { formatDuration } from '../engine/format.js';
import { UsageError } from './errors.js';

// A second for the stop's own bookkeeping and the runtime's SIGKILL to come after gsup's.
const MARGIN_MS = 1000;

/**
 * The kill timeout under the orchestrator's grace period (`--grace`, as
 * Kubernetes' terminationGracePeriodSeconds or `docker stop -t`): by default
 * grace − stop delay − 1 s (at least 0); an explicit kill timeout that, with
 * the stop delay, does not fit in the grace is refused, saying by how much.
 */
export function killTimeoutWithin(
  grace: { ms: number; what: string } | undefined,
  killTimeout: { ms: number; what: string } | undefined,
  stopDelay: { ms: number; what: string },
  fallbackMs: number,
): number {
  if (!grace) return killTimeout?.ms ?? fallbackMs;
  const used = (killTimeout?.ms ?? 0) + stopDelay.ms;
  if (used > grace.ms) {
    const parts = [killTimeout && `${killTimeout.what} ${formatDuration(killTimeout.ms)}`, `${stopDelay.what} ${formatDuration(stopDelay.ms)}`].filter(Boolean).join(' + ');
    throw new UsageError(`${parts} is over ${grace.what} ${formatDuration(grace.ms)} by ${formatDuration(used - grace.ms)}: the orchestrator would SIGKILL first`);
  }
  return killTimeout?.ms ?? Math.max(0, grace.ms - stopDelay.ms - MARGIN_MS);
}
