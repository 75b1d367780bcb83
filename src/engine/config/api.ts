import type { Readable } from 'node:stream';
import type { ConfigOptions } from './config.js';
import type { Logger } from '../../output/log.js';
import type { Platform, SignalName } from '../../platform/index.js';
import { spawnErrorMessage } from '../machine/outcomes/exit-status.js';
import type { SpawnedCommand, SpawnFunction } from '../children/spawn.js';
import type { StatusBoard } from '../shell/status-board.js';
import type { HeldSockets } from '../listen/held.js';
import type { ListenPreload } from '../listen/handover.js';
import type { CommandExit } from '../machine/values.js';

// What `supervise()` takes and gives.

export interface SuperviseOptions extends ConfigOptions {
  stdio?: 'inherit' | 'pipe' | 'ignore';
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: Logger;
  platform?: Platform;
  spawn?: SpawnFunction;
  /**
   * CLI: when gsup leads the session of the terminal on its stdin (`docker
   * run -it`), give it up to the command's session (`group` target, stdio
   * inherited). It changes the host process's session: off in the library.
   */
  terminal?: boolean;
  /** Job control: how gsup stops itself after forwarding SIGTSTP/SIGTTIN/SIGTTOU (the CLI sends itself SIGSTOP). */
  suspendSelf?: () => void;
  /** Called as gsup is asked to stop (a stop signal, or the handle's stop()), the stop under way (the CLI's V8). */
  stopping?: () => void;
  /** Where to publish readiness and metrics for the orchestrator (the CLI's status endpoint reads it). */
  status?: StatusBoard;
  /**
   * Signals received before the engine was built (the CLI's early handlers): handed over in order,
   * then each as it comes.
   */
  inbox?: { attach(listener: (signal: SignalName) => void): void; readonly swallowed?: SignalName };
  /**
   * CLI (--listen): the sockets gsup holds, bound before the supervision, handed to every run; the preload
   * unchanged Node apps load (none when it could not be installed); `preload: false`: --no-listen-preload.
   */
  listen?: { sockets: HeldSockets; preload: boolean; preloadFile?: ListenPreload };
}

export interface SupervisorResult {
  /** What gsup exits with: the command's code, 128+N for signal N, 126/127/125. */
  exitCode: number;
  /** The command's own exit code, or null. */
  code: number | null;
  /** The signal the command died of, or null. */
  signal: SignalName | null;
  /** A signal it died of that has no name here (a real-time one, SIGRTMIN+n), by number; `signal` is null then. */
  signo?: number;
  /** Whether any process had to be SIGKILLed. */
  killed: boolean;
  /** Why the command could not be started (`node: command not found`), if it could not. */
  error?: string;
}

export interface SupervisorHandle {
  /** The command's pid; undefined when it could not be started (or a stop signal came first). */
  readonly pid: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Handle a signal as if gsup had received it: rewrite, forward, or stop. */
  signal(signal: SignalName): void;
  /** Start the stop sequence (SIGTERM by default) and wait for the end. */
  stop(signal?: SignalName): Promise<SupervisorResult>;
  readonly exited: Promise<SupervisorResult>;
}

/** What a supervision ends with: gsup's status, the command's own, and why it could not start (if so). */
export function supervisorResult(
  command: string,
  exitCode: number,
  exit: CommandExit,
  killed = false,
): SupervisorResult {
  const result: SupervisorResult = { exitCode, code: exit.code, signal: exit.signal, killed };
  if (exit.signo !== undefined) result.signo = exit.signo;
  return exit.errorCode !== undefined
    ? { ...result, error: spawnErrorMessage(command, exit.errorCode, exit.error) }
    : result;
}

/** The handle of a supervision: its current run's pid and output, and a way to signal or stop it. */
export function supervisorHandle(
  run: () => { readonly pid: number | undefined; readonly spawned: SpawnedCommand },
  signal: (signal: SignalName) => void,
  stop: (signal?: SignalName) => Promise<SupervisorResult>,
  exited: Promise<SupervisorResult>,
): SupervisorHandle {
  return {
    get pid() {
      return run().pid;
    },
    get stdout() {
      return run().spawned.stdout;
    },
    get stderr() {
      return run().spawned.stderr;
    },
    signal,
    stop,
    exited,
  };
}
