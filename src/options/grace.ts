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
 * Either way the line says what would fit. The 1 s floor is for what gsup
 * chooses itself: an explicit kill timeout is the user's, however short
 * (`-t 0`: SIGKILL right after the stop signal, as `docker stop -t 0`).
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
  if (derived < MIN_KILL_TIMEOUT_MS) throw new UsageError(tooShort(grace, stopDelay));
  return derived;
}

/**
 * Why a grace leaves no room, in one sentence with the values to use
 * instead: the least grace, and (where one exists) the longest stop delay.
 */
function tooShort(grace: { ms: number; what: string }, stopDelay: { ms: number; what: string }): string {
  const delay = stopDelay.ms > 0 ? ` for ${stopDelay.what} ${plain(stopDelay.ms)}` : '';
  const holds = stopDelay.ms > 0 ? 'the stop delay, a kill timeout' : 'a kill timeout';
  const leastGrace = stopDelay.ms + MIN_KILL_TIMEOUT_MS + MARGIN_MS;
  const longestDelay = grace.ms - MIN_KILL_TIMEOUT_MS - MARGIN_MS;
  let shorter = '';
  if (stopDelay.ms > 0 && longestDelay > 0) shorter = ` (or ${stopDelay.what} ${plain(longestDelay)} or less)`;
  else if (stopDelay.ms > 0 && longestDelay === 0) shorter = ` (or no ${stopDelay.what})`;
  return (
    `${grace.what} ${plain(grace.ms)} is too short${delay}: it must hold ${holds} of at least ` +
    `${plain(MIN_KILL_TIMEOUT_MS)} and ${plain(MARGIN_MS)} to spare, so use ${grace.what} ${plain(leastGrace)} ` +
    `or more${shorter}`
  );
}

/** A duration as a user would type it again: `4s`, `1.5s`, `500ms`. */
function plain(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Number((ms / 1000).toFixed(3))}s`;
}
