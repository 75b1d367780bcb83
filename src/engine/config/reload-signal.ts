import type { SignalName } from '../../platform/types.js';
import { forwardableSignals, JOB_CONTROL_SIGNALS, NOT_FORWARDED, STOP_SIGNALS } from '../../platform/signals.js';

// Which signals can be the reload signal: the CLI's check, supervise()'s, and the forwarded-death line's hint.

/**
 * Why a signal cannot be the reload signal (undefined: it can): a stop signal or job control keeps its meaning,
 * KILL, STOP and CHLD are no requests, the parent's death signal is a stop's, and a signal a rule rewrites is that
 * rule's.
 */
export function reloadSignalProblem(
  signal: SignalName,
  rewrite: ReadonlyMap<SignalName, SignalName | null>,
  pdeathsig?: SignalName,
): string | undefined {
  if (STOP_SIGNALS.has(signal)) return `${signal} is a stop signal`;
  if (JOB_CONTROL_SIGNALS.has(signal)) return `${signal} is job control`;
  if (NOT_FORWARDED.has(signal)) return `gsup cannot take ${signal} as a request`;
  if (signal === pdeathsig) return `${signal} is the --pdeathsig signal`;
  if (rewrite.has(signal)) return `a --rewrite rule rewrites ${signal}`;
  return undefined;
}

/** The signals that could be the reload signal and, forwarded, are what gsup received (no rule makes them). */
export function reloadableSignals(rewrite: ReadonlyMap<SignalName, SignalName | null>): ReadonlySet<SignalName> {
  const made = new Set(rewrite.values());
  return new Set(forwardableSignals().filter((signal) => !made.has(signal) && !reloadSignalProblem(signal, rewrite)));
}
