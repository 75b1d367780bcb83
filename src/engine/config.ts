import { constants } from 'node:os';
import type { SignalName } from '../platform/types.js';
import type { HealthConfig } from './health.js';
import type { OnExitPolicy } from './on-exit.js';
import type { RestartMode } from './restart.js';
import type { TargetMode } from './plan.js';

/**
 * What one supervision is asked to do, every field set: the CLI builds it
 * from flags and GSUP_* variables, the library from `supervise()`'s options,
 * both through `resolveConfig`. The engine never applies a default itself.
 */
export interface SupervisorConfig {
  /** Milliseconds between the stop signal and SIGKILL of what is left. */
  killTimeout: number;
  /** Where forwarded signals go. */
  target: TargetMode;
  /** Received signal → signal to forward; null drops it. */
  rewrite: ReadonlyMap<SignalName, SignalName | null>;
  /** Milliseconds to wait on SIGTERM before forwarding it. */
  stopDelay: number;
  /** What to do when the command exits while descendants live. */
  onExit: OnExitPolicy;
  /** Exit codes that count as success (become 0). */
  successExit: readonly number[];
  /** Linux: become child subreaper, so that orphans of the tree come to gsup and are reaped (as PID 1 they always are). */
  subreaper: boolean;
  /** Look for pm2 God daemons and pm2-runtime, and route signals and stops through pm2. */
  pm2: boolean;
  restart: RestartMode;
  /** Quick failures in a row before giving up. */
  maxRestarts: number;
  /** First delay before a restart, in ms; doubles after each quick failure, up to 30 s. */
  restartDelay: number;
  /** Health checks that act: none unless a probe is given. */
  health: HealthConfig | undefined;
}

export const DEFAULT_CONFIG: Readonly<SupervisorConfig> = Object.freeze({
  killTimeout: 10_000,
  target: 'group',
  rewrite: new Map(),
  stopDelay: 0,
  onExit: 'auto',
  successExit: [],
  // Off in the library (it changes the host process); the CLI turns it on.
  subreaper: false,
  pm2: true,
  restart: 'never',
  maxRestarts: 10,
  restartDelay: 1000,
  health: undefined,
});

/** Every field given, or its default. Throws a TypeError for a rewrite rule that could never match. */
export function resolveConfig(given: Partial<SupervisorConfig>): SupervisorConfig {
  const config = { ...DEFAULT_CONFIG };
  for (const key of Object.keys(DEFAULT_CONFIG) as Array<keyof SupervisorConfig>) {
    if (given[key] !== undefined) (config as Record<string, unknown>)[key] = given[key];
  }
  checkRewrite(config.rewrite);
  return config;
}

// The library takes full names only ('SIGTERM'): a short one ('TERM') would be a rule that silently never applies.
function checkRewrite(rewrite: ReadonlyMap<SignalName, SignalName | null>): void {
  const known = (name: unknown) => typeof name === 'string' && name in constants.signals;
  for (const [from, to] of rewrite) {
    if (!known(from)) throw new TypeError(`rewrite: ${JSON.stringify(from)} is not a signal name: use full names such as 'SIGTERM'`);
    if (to !== null && !known(to)) throw new TypeError(`rewrite: ${JSON.stringify(to)} (for ${from}) is not a signal name: use full names such as 'SIGINT', or null to drop`);
  }
}
