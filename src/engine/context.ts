import type { Logger } from '../log.js';
import type { Platform, SignalName } from '../platform/index.js';
import type { TreeSnapshot } from './tree.js';
import type { Wakeup } from './wakeup.js';

/** What the parts of one supervision share; `abort` tears down every timer of the run. */
export interface EngineContext {
  platform: Platform;
  logger: Logger;
  wakeup: Wakeup;
  abort: AbortSignal;
  /** Look at the tree (logging what changed at -v). */
  scan(): Promise<TreeSnapshot>;
  /**
   * Send a signal to the target, once per process; returns the snapshot it
   * used and the pids it reached. `only`: to these pids alone. `stop`: this
   * is the stop signal (pm2 God daemons are stopped with `pm2 kill`).
   */
  forward(signal: SignalName, options?: { only?: ReadonlySet<number>; stop?: boolean }): Promise<Forwarded>;
  /** The command's pid (undefined if it could not be started). */
  commandPid: number | undefined;
  /** The process group gsup runs in (never signalled as a group). */
  ownPgid(): Promise<number>;
}

export interface Forwarded {
  snapshot: TreeSnapshot;
  reached: Set<number>;
}

export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;
}
