import type { ListenAddress } from '../engine/listen/address.js';
import { DEFAULT_CONFIG } from '../engine/config/config.js';
import { reloadSignalProblem } from '../engine/config/reload-signal.js';
import type { SignalName } from '../platform/types.js';
import { quoted, UsageError } from './errors.js';
import { parseDuration } from './duration.js';
import { parseSignal } from './signals.js';

/** The flag if given, else the variable (named in errors as such): cli-options.ts's `pick`. */
type Pick = (key: string, flag: string, variable: string) => [string, string] | undefined;

/** What --reload-signal is checked against: the rules of -r, -p's signal, and what can say a new run is ready. */
interface Taken {
  rewrite: ReadonlyMap<SignalName, SignalName | null>;
  pdeathsig: SignalName | undefined;
  waitReady: boolean;
  listen: readonly ListenAddress[];
}

/**
 * `--reload-signal` (GSUP_RELOAD_SIGNAL): a signal gsup can take as a request that means nothing else to it (not
 * a stop signal, job control, the parent's death signal, nor one a rule rewrites), with something to say when the
 * new run is ready: its first listen on a held socket (--listen), or its word (--wait-ready).
 */
export function reloadConfig(pick: Pick, taken: Taken): SignalName | undefined {
  const given = pick('reloadSignal', '--reload-signal', 'GSUP_RELOAD_SIGNAL');
  if (!given) return undefined;
  const signal = parseSignal(...given)!;
  const problem = reloadSignalProblem(signal, taken.rewrite, taken.pdeathsig);
  if (problem) throw new UsageError(`invalid signal ${quoted(given[0])} for ${given[1]}: ${problem}`);
  if (!taken.waitReady && taken.listen.length === 0) {
    const why = 'nothing would say when the new run is ready';
    throw new UsageError(`${given[1]} ${quoted(given[0])} needs --listen or --wait-ready: ${why}`);
  }
  return signal;
}

/** `--reload-drain` (GSUP_RELOAD_DRAIN): how long a reload's old run may drain before its stop signal. */
export function reloadDrainConfig(pick: Pick): number {
  const given = pick('reloadDrain', '--reload-drain', 'GSUP_RELOAD_DRAIN');
  return given ? parseDuration(...given) : DEFAULT_CONFIG.reloadDrain;
}
