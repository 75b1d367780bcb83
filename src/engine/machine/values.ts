import type { ProcessInfo, SignalName } from '../../platform/types.js';
import type { Target } from './ledger/ledger.js';

// The values the pure step speaks of, defined here so that machine/ imports nothing of the rooms that act on
// the world (they import these from here): how the command ended, what a look found, a pm2 route, the health verdict.

/** How the command ended: an exit code, a signal, or a spawn error (ENOENT, EACCES, ...). */
export interface CommandExit {
  code: number | null;
  signal: SignalName | null;
  /** A signal it died of that has no name here (a real-time one, SIGRTMIN+n), by number; `signal` is null then. */
  signo?: number;
  /** Set when the command could not be started. */
  errorCode?: string;
  /** What failed, when gsup could not prepare or spawn the run itself (a socketpair, a pipe, the spawn throwing). */
  error?: string;
}

/** What one look at the system found of gsup's tree. */
export interface Snapshot {
  /** Every member of the tree (zombies included), gsup itself excluded. */
  members: ProcessInfo[];
  /** The members that are alive (not zombies). */
  alive: ProcessInfo[];
  /** Every process on the system, by process group: to tell whether a whole group is ours. */
  groups: Map<number, ProcessInfo[]>;
  /** Every process on the system, by parent pid. */
  children: Map<number, ProcessInfo[]>;
  /** Pids that joined / left the tree since the previous look. */
  joined: ProcessInfo[];
  left: number[];
  /** The commands among `left`: their exit is logged with its status, not as a tree change. */
  leftCommands: number[];
  /** Children of gsup judged in this look (as PID 1, by provenance; gsup's own from before its first spawn). */
  judgments?: Judgment[];
  /**
   * While two runs live (a reload), the run each member is of (pid → run id): by descent from its command, by its
   * session, by its mark, else by when it started; a process keeps its run wherever it is reparented.
   */
  runs?: ReadonlyMap<number, number>;
}

/**
 * How a child of gsup no look saw descend from a run was judged, and why:
 * `mark` (it carries this gsup's mark: the tree's), `absent` (its mark was
 * read and is not there), `unreadable` (gsup may not read it, and nothing
 * shows it is not the tree's: the tree's), `before` (started before gsup
 * first started anything with the mark), `session` (unreadable, but in the
 * session of a process that is not the tree's), `own` (gsup's own child from
 * before its first spawn: a preload's), `entered` (it entered gsup's PID
 * namespace from outside, or descends from one that did), `denied` (gsup may
 * not signal it).
 */
export interface Judgment {
  info: ProcessInfo;
  ours: boolean;
  why: 'mark' | 'absent' | 'unreadable' | 'before' | 'session' | 'own' | 'entered' | 'denied';
  /** The run whose mark it carries; why it cannot be read (errno), and the session's leader. */
  detail?: string;
}

/**
 * A process that runs pm2's God: the daemon `pm2 start` leaves behind, or a
 * `pm2-runtime` in the foreground. It and its apps share a process group; a
 * signal to that group reaches each app twice (from the kernel, then from
 * pm2), and pm2 restarts an app signalled behind its back. So signals go to
 * the manager alone, and a stop of a daemon goes through pm2 (`pm2 kill`
 * once it is proven gsup's).
 */
export interface Pm2Manager {
  info: ProcessInfo;
  kind: 'daemon' | 'runtime';
  /** A God daemon proven gsup's: stopped with `pm2 kill`. Undefined for a runtime. */
  proof?: Pm2Proof;
  /** Why a God daemon is not proven gsup's: it gets the stop signal alone, and pm2 stops its apps itself. */
  why?: string;
}

/**
 * What proves a God daemon gsup's: the PM2_HOME whose pid file names it
 * (`from` gsup's own environment, or the daemon's, when it descends from a
 * run and carries its mark), and the user `pm2 kill` runs as: the daemon's
 * (undefined: gsup's own).
 */
export interface Pm2Proof {
  home: string;
  from: 'gsup' | 'daemon';
  user: { uid: number; gid: number } | undefined;
}

/** A signal's way, adjusted for pm2 (Pm2Supervision.route): a value the pure step may hold (its stop rounds). */
export interface Pm2Route {
  targets: Target[];
  /** God daemons to stop through pm2: `pm2 kill` when proven, else the stop signal to the daemon alone. */
  pm2Kill: Pm2Manager[];
  /** The managers and every process they run. */
  managed: Set<number>;
  /** Each manager and the pids it runs. */
  runs: Map<Pm2Manager, number[]>;
}

/** `failing`: it passed, and then failed fewer than `retries` times in a row (not ready; not stopped yet). */
export type HealthState = 'starting' | 'healthy' | 'failing' | 'unhealthy';

/**
 * Where a stop round's signal goes, as the shell planned it on the look (forwarder.plan), the command's pid, and
 * the relayers of the look (processKey; by their command lines, read ahead: see ledger.ts).
 */
export interface Route extends Pm2Route {
  readonly commandPid: number | undefined;
  readonly relayers: ReadonlySet<string>;
}
