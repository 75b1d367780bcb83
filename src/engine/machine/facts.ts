import type { SignalName } from '../../platform/types.js';
import type { RestartMode } from './outcomes/restart.js';
import type { OnExitPolicy } from './stop/on-exit.js';

/** What step may read but not change: the settings, the time now, this system's signal numbers. */
export interface Facts {
  readonly now: number;
  readonly config: MachineConfig;
  readonly signalNumber: (signal: SignalName) => number;
}

export interface MachineConfig {
  readonly killTimeout: number;
  readonly stopDelay: number;
  readonly onExit: OnExitPolicy;
  readonly successExit: readonly number[];
  readonly restart: RestartMode;
  readonly maxRestarts: number;
  readonly restartDelay: number;
  /** Whether health probes are configured (their schedule is the health checks' own: Docker's rules). */
  readonly probes: boolean;
  /** Ready only once the app says so (`--wait-ready`): each run starts `waiting`. */
  readonly waitReady: boolean;
  /** waitReady: no word by then (ms) fails the start (undefined: no limit); a reload's next run: 30 s when undefined */
  readonly readyTimeout: number | undefined;
  /** The stop signal a run is retired with (a reload): SIGTERM after the rules of -r. */
  readonly retireSignal: SignalName;
  /** How long a reload's old run may drain its connections before its stop signal (--reload-drain), in ms. */
  readonly reloadDrain: number;
  /** Held sockets (--listen): their names, and whether gsup's preload is handed to Node (not --no-listen-preload). */
  readonly listen?: { readonly names: readonly string[]; readonly preload: boolean };
  /** --reload-signal, and the signals it could be (its rules): named when a forwarded one ends the app. */
  readonly reload: { readonly signal: SignalName | undefined; readonly candidates: ReadonlySet<SignalName> };
}
