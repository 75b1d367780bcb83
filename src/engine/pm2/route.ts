import type { Target } from '../machine/ledger.js';
import type { Pm2Manager } from './claims.js';

/** A signal's way, adjusted for pm2 (Pm2Supervision.route): a value the pure step may hold (its stop rounds). */
export interface Pm2Route {
  targets: Target[];
  /** God daemons to stop with `pm2 kill`. */
  pm2Kill: Pm2Manager[];
  /** The managers and every process they run. */
  managed: Set<number>;
  /** Each manager and the pids it runs. */
  runs: Map<Pm2Manager, number[]>;
}
