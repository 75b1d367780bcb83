import type { SignalName } from '../../../platform/types.js';
import { stopRound, type Ledger } from './ledger.js';
import type { Out } from '../state.js';
import type { Route, Snapshot } from '../values.js';

/**
 * One stop round on the route the shell planned, for the whole tree's stop (`run` undefined) or a retiring run's
 * (its part of the look, its ledger): the ledger says who has had the stop signal, so none gets it twice; the
 * effect carries out the rest. `again`: a stop signal received again. Returns the ledger after the round.
 */
export function sendRound(
  round: { run: number | undefined; ledger: Ledger; signal: SignalName; again: SignalName | undefined },
  snapshot: Snapshot,
  route: Route,
  exited: boolean,
  out: Out,
): Ledger {
  const { run, signal } = round;
  const {
    ledger,
    fresh: targets,
    pm2Kill,
    again,
    cont,
    pm2Cont,
    held,
  } = stopRound(round.ledger, route, snapshot.alive, round.again, exited);
  out.push({ kind: 'stop-round', run, snapshot, route, signal, targets, pm2Kill, again, cont, pm2Cont, held });
  return ledger;
}
