import type { ProcessInfo, SendMoment, SignalName } from '../../platform/types.js';
import type { OnExitPolicy } from './on-exit.js';
import { firstRestartState, type RestartMode, type RestartState } from './restart.js';
import type { Ledger, Target } from './ledger.js';
import type { CommandExit, Pm2Manager, Pm2Route, Snapshot } from './values.js';

// The machine's values: its state (the phase with its data), what happens to
// it (inputs), what it asks for (effects), and what it may read (facts).

/** Timers of a supervision; each fires as an input of the same name. */
export type TimerName =
  'stop-delay' | 'kill-timeout' | 'restart-delay' | 'check' | 'finish' | 'health' | 'ready-timeout';

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
  /** With waitReady: no word by then (ms) is a failed start; undefined waits as long as it takes. */
  readonly readyTimeout: number | undefined;
  /** Held sockets (--listen): their names, and whether gsup's preload is handed to Node (not --no-listen-preload). */
  readonly listen?: { readonly names: readonly string[]; readonly preload: boolean };
}

/** What the app said of itself this run: nothing yet (with --wait-ready), ready, or that it is stopping (sd_notify). */
export type AppWord = 'waiting' | 'ready' | 'stopping';

/** A process of a run that took a held socket (its first listen on it), until it closes it or is gone. */
export interface Taker {
  readonly name: string;
  readonly pid: number;
  /** How gsup knows: its word (it holds the report channel too), or the kernel's view. */
  readonly seen: 'word' | 'kernel';
}

/** What a run did with the held sockets: what it took, who holds them now, and whether that was said. */
export interface RunHeld {
  /** The names some process of the run took, ever. */
  readonly took: readonly string[];
  readonly takers: readonly Taker[];
  /** Every holder of the run's report channel is gone (its EOF): with no taker seen since, none listens. */
  readonly released: boolean;
  /** The warning for a run that took none is out. */
  readonly warned: boolean;
}

/** One run of the command, as step knows it. */
export interface Run {
  readonly id: number;
  readonly startedAt: number;
  /** `ready` from the start without --wait-ready. */
  readonly app: AppWord;
  /** Under --listen, once anything was heard of it. */
  readonly held?: RunHeld;
}

/**
 * What began a stop: a stop signal received, gsup itself (a restart, `--on-exit stop`, a fault), failed health
 * checks, or no word of readiness in time (`--ready-timeout`). The last two are failures: never exit 0.
 */
export type StopCause = 'signal' | 'gsup' | 'unhealthy' | 'not-ready';

export interface RestartPlan {
  readonly delayMs: number;
  readonly reason: string;
}

/**
 * One stop sequence: its signal, what follows it, the stop signals received
 * during it (the third kills), and its ledger (who has had the stop signal).
 */
export interface Stop {
  readonly signal: SignalName;
  readonly then: 'exit' | 'restart';
  readonly cause: StopCause;
  readonly received: number;
  /** A stop signal received again: forwarded at the next look to everyone the stop signal reached, once. */
  readonly again: SignalName | undefined;
  readonly ledger: Ledger;
  /** The restart decided when the command exited, carried out once what it left is gone. */
  readonly plan: RestartPlan | undefined;
}

/** What outlives phases: counts, and the verdicts that shape the exit status. */
export interface Tally {
  readonly runs: number;
  readonly faults: number;
  readonly restarts: RestartState;
  /** The last stop was for failed health checks (or a failed start) and no restart followed: never exit 0. */
  readonly unhealthyExit: boolean;
  /** gsup stayed for daemons (`auto`): the last one reaped gives gsup its status. */
  readonly stayed: boolean;
  readonly daemonExit: CommandExit | undefined;
  /** What gsup reaped of the tree since the last stop began (none before one): the status behind a wrapper. */
  readonly behind: Behind | undefined;
  /** Final sweeps for zombies whose threads are still exiting. */
  readonly sweeps: number;
  /** Held sockets (--listen) not shut down yet: every run gets them, until no run follows. */
  readonly open?: readonly string[];
}

/**
 * The processes gsup reaped during a stop, summed up for a command that is a
 * wrapper (a shell, npm): one that dies of the stop signal it passed on says
 * nothing of the app behind it, whose status gsup, reaping it, knows.
 */
export interface Behind {
  readonly signal: SignalName;
  /** The command, as last seen, was a shell or a package manager. */
  readonly wrapper: boolean;
  /** Some exited 0. */
  readonly zero: boolean;
  /** The last that failed: a code other than 0, or a signal other than the stop's (SIGKILL). */
  readonly failure: CommandExit | undefined;
}

/** A phase of the stop sequence: the command may have exited meanwhile. */
interface Stopping<P extends string> {
  readonly phase: P;
  readonly tally: Tally;
  readonly run: Run;
  readonly exit: CommandExit | undefined;
  readonly stop: Stop;
}

/** The phase and its data: what each phase needs, and nothing it may lack. */
export type State =
  | { readonly phase: 'starting'; readonly tally: Tally }
  | { readonly phase: 'running'; readonly tally: Tally; readonly run: Run }
  | {
      readonly phase: 'exited';
      readonly tally: Tally;
      readonly run: Run;
      readonly exit: CommandExit;
      readonly restart: RestartPlan | undefined;
    }
  | { readonly phase: 'daemons'; readonly tally: Tally; readonly run: Run; readonly exit: CommandExit }
  | {
      readonly phase: 'restarting';
      readonly tally: Tally;
      readonly run: Run;
      readonly exit: CommandExit;
      readonly restart: RestartPlan;
    }
  | Stopping<'stop-delay'>
  | Stopping<'stopping'>
  | (Stopping<'killing'> & { readonly killStartedAt: number })
  | { readonly phase: 'ending'; readonly tally: Tally; readonly run: Run; readonly exit: CommandExit | undefined }
  | { readonly phase: 'done'; readonly tally: Tally; readonly exitCode: number; readonly exit: CommandExit };

export type Phase = State['phase'];
export type In<P extends Phase> = Extract<State, { phase: P }>;

/**
 * Where a stop round's signal goes, as the shell planned it on the look (forwarder.plan), the command's pid, and
 * the relayers of the look (processKey; by their command lines, read ahead: see ledger.ts).
 */
export interface Route extends Pm2Route {
  readonly commandPid: number | undefined;
  readonly relayers: ReadonlySet<string>;
}

/** What happened, as values: the shell turns events and looks into these. */
export type Input =
  | { kind: 'start'; stopFirst: SignalName | undefined }
  | { kind: 'stop-signal'; signal: SignalName; reason: string }
  | {
      kind: 'command-exit';
      run: number;
      exit: CommandExit;
      sent: ReadonlySet<SignalName>;
      treeGone: boolean;
      mayHaveDaemon: boolean;
      /** The command, as last seen, is a shell or a package manager (see Behind). */
      wrapper: boolean;
    }
  | { kind: 'reaped'; exits: readonly CommandExit[] }
  | { kind: 'child-gone'; treeGone: boolean }
  /** A look at the tree; with the route of a stop round when one is due (stopRoundSignal, stop-sequence.ts). */
  | { kind: 'looked'; snapshot: Snapshot; commandPgid: number | undefined; route: Route | undefined }
  /** What a stop round's delivery sent as whole groups, each with its moment (read right before its send). */
  | { kind: 'round-sent'; groups: ReadonlyArray<{ pgid: number; moment: SendMoment | undefined }> }
  | { kind: 'timer'; name: TimerName }
  | { kind: 'health'; run: number; unhealthy: boolean }
  /** The app of run N said a word (`process.send('ready')`, or READY=1 / STOPPING=1 on $NOTIFY_SOCKET). */
  | { kind: 'app-said'; run: number; word: 'ready' | 'stopping'; via: string }
  | { kind: 'swept'; notYet: number }
  | { kind: 'fault'; message: string }
  | HeldInput
  /** Before run N's spawn: the held sockets that could not be had again (their port taken), none when all listen. */
  | { kind: 'sockets-checked'; run: number; lost: readonly string[] };

/** What a run said of the held sockets on its report channel (or the kernel showed: `via`), and the channel's end. */
export type HeldInput =
  /** `word`: its own, on the report channel; `kernel`: seen watching it (epoll) or in accept(2) on it. */
  | { kind: 'socket-taken'; run: number; name: string; pid: number; seen: 'word' | 'kernel' }
  | { kind: 'socket-closed'; run: number; name: string; pid: number }
  /** Every holder of run N's report channel is gone (its EOF). */
  | { kind: 'report-closed'; run: number };

export type LogLevel = 'error' | 'warn' | 'notice' | 'info' | 'debug';

/** What to do, as values: the shell carries them out in order. */
export type Effect =
  | { kind: 'spawn'; run: number }
  | { kind: 'look'; delayMs: number }
  | { kind: 'set-timer'; name: TimerName; ms: number }
  | { kind: 'ensure-timer'; name: TimerName; ms: number }
  | { kind: 'clear-timer'; name: TimerName }
  | { kind: 'log'; level: LogLevel; event: string; message: string; fields?: { [key: string]: unknown } }
  | { kind: 'pause-health' }
  | { kind: 'probe'; run: number }
  /** The next round of probes after the health checks' own interval (the start interval while still starting). */
  | { kind: 'schedule-probe' }
  /** A stop begins: its summary counts from now on. */
  | { kind: 'begin-stop' }
  /** A look during the stop delay: who is there, for the summary. */
  | { kind: 'count-seen'; snapshot: Snapshot }
  /**
   * On this look: the stop signal to `targets` (the roots not reached yet), pm2's stop to `pm2Kill`, `again`;
   * then SIGCONT to `cont` (stopped). `held`: relayers left out, said in the log.
   */
  | {
      kind: 'stop-round';
      snapshot: Snapshot;
      route: Route;
      signal: SignalName;
      targets: Target[];
      pm2Kill: Pm2Manager[];
      /** A stop signal received again, to everyone the stop signal reached. */
      again: { signal: SignalName; targets: Target[] } | undefined;
      cont: ProcessInfo[];
      held: ProcessInfo[];
    }
  /** SIGKILL for the command's group (while the command is unreaped), then for everything of each look. */
  | { kind: 'kill-command-group' }
  | { kind: 'kill-round'; snapshot: Snapshot }
  /** SIGKILL did not end these (uninterruptible sleep): name them and give up. */
  | { kind: 'give-up-killing'; alive: ProcessInfo[] }
  /** The stop's one summary line. */
  | { kind: 'end-stop' }
  /** The last reap before the exit: zombies whose threads are still exiting are waited for. */
  | { kind: 'sweep' }
  | { kind: 'end'; exitCode: number; exit: CommandExit }
  /** Before run N's spawn: is each held socket still listening? (answered by `sockets-checked`) */
  | { kind: 'check-sockets'; run: number }
  /** These held sockets are done with: shut down for every holder (new connections refused), and closed. */
  | { kind: 'shut-sockets'; names: readonly string[]; reason: string };

export type Out = Effect[];

export function initialState(): State {
  const tally: Tally = {
    runs: 0,
    faults: 0,
    restarts: firstRestartState(),
    unhealthyExit: false,
    stayed: false,
    daemonExit: undefined,
    behind: undefined,
    sweeps: 0,
  };
  return { phase: 'starting', tally };
}
