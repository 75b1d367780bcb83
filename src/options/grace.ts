import { formatDuration } from '../engine/machine/format.js';
import { UsageError } from './errors.js';

// A second for the stop's own bookkeeping and the runtime's SIGKILL to come after gsup's.
const MARGIN_MS = 1000;
// The least kill timeout gsup derives from a grace: less leaves an app no time for its SIGTERM.
const MIN_KILL_TIMEOUT_MS = 1000;

/**
 * The kill timeout under the orchestrator's grace period (`--grace`, as
 * Kubernetes' terminationGracePeriodSeconds or `docker stop -t`): by default
 * grace − stop delay − 1 s, refused when that is under 1 s; an explicit kill
 * timeout that, with the stop delay, does not fit in the grace is refused.
 * Either way the line says by how much. An explicit kill timeout is the
 * user's choice, however short (`-t 0`: SIGKILL at once).
 */
export function killTimeoutWithin(
  grace: { ms: number; what: string } | undefined,
  killTimeout: { ms: number; what: string } | undefined,
  stopDelay: { ms: number; what: string },
  fallbackMs: number,
): number {
  if (!grace) return killTimeout?.ms ?? fallbackMs;
  const said = (given: { ms: number; what: string }) => `${given.what} ${formatDuration(given.ms)}`;
  const used = (killTimeout?.ms ?? 0) + stopDelay.ms;
  if (used > grace.ms) {
    const parts = [killTimeout && said(killTimeout), said(stopDelay)].filter(Boolean).join(' + ');
    const over = formatDuration(used - grace.ms);
    throw new UsageError(`${parts} is over ${said(grace)} by ${over}: the orchestrator would SIGKILL first`);
  }
  if (killTimeout) return killTimeout.ms;
  const derived = grace.ms - stopDelay.ms - MARGIN_MS;
  if (derived < MIN_KILL_TIMEOUT_MS) {
    const left = formatDuration(Math.max(0, derived));
    const short = formatDuration(MIN_KILL_TIMEOUT_MS - derived);
    throw new UsageError(
      `${said(grace)} leaves a kill timeout of ${left} after ${said(stopDelay)} and a 1s margin, ` +
        `${short} short of 1s: ` +
        'the app would be SIGKILLed as soon as it got SIGTERM',
    );
  }
  return derived;
}
