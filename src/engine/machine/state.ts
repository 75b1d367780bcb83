import type { ProcessInfo, SignalName } from '../../platform/types.js';
import type { GroupSent } from './ledger/continuity.js';
import { firstRestartState, type RestartState } from './outcomes/restart.js';
import type { Ledger, Target } from './ledger/ledger.js';
import {
  NO_RELOADS,
  type Beside,
  type HeldInput,
  type Reloads,
  type RetireCause,
  type Run,
  type SampleWhy,
} from './runs/run.js';
import type { CommandExit, Pm2Manager, Route, Snapshot } from './values.js';

export type {
  AppWord,
  Beside,
  HeldInput,
  Reloads,
  Run,
  RunHeld,
  SampleWhy,
  Taker,
  TellWord,
  Told,
} from './runs/run.js';
export type { Route } from './values.js';
export type { Facts, MachineConfig } from './facts.js';

// The machine's values: its state (the phase with its data), what happens to
// it (inputs), what it asks for (effects), and what it may read (facts).

/** Timers of a supervision, each fires as an input of its name; a reload's are its runs' own (drain limit too). */
export type TimerName =
  | 'stop-delay'
  | 'kill-timeout'
  | 'restart-delay'
  | 'check'
  | 'finish'
  | 'health'
  | 'ready-timeout'
  | 'next-ready-timeout'
  | 'retire-kill-timeout'
  | 'drain-limit'
  | 'untaken';

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
  /** During a reload, the run beside the current one (run.ts): it lives across the current run's phases. */
  readonly beside: Beside | undefined;
  readonly reloads: Reloads;
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
  /**
   * A look at the tree; with the route of a stop round when one is due (stopRoundSignal, stop-sequence.ts), and
   * of a retiring run's round, planned on its part of the look (retireRoundSignal, retire.ts).
   */
  | {
      kind: 'looked';
      snapshot: Snapshot;
      commandPgid: number | undefined;
      route: Route | undefined;
      retireRoute?: Route;
    }
  /**
   * What a stop round's delivery sent as whole groups, each with its moment (read around its send) and the
   * members planned for it found outside it right after; `run`: the round was a retiring run's (its own ledger),
   * else the stop's.
   */
  | { kind: 'round-sent'; run?: number; groups: readonly GroupSent[] }
  /** The reload signal (--reload-signal) was received. */
  | { kind: 'reload'; reason: string }
  | { kind: 'timer'; name: TimerName }
  | { kind: 'health'; run: number; unhealthy: boolean }
  /** The app of run N said a word (`process.send('ready')`, or READY=1 / STOPPING=1 on $NOTIFY_SOCKET). */
  | { kind: 'app-said'; run: number; word: 'ready' | 'stopping'; via: string }
  | { kind: 'swept'; notYet: number }
  | { kind: 'fault'; message: string }
  | HeldInput
  /** Before run N's spawn: the held sockets that could not be had again (their port taken), none when all listen. */
  | { kind: 'sockets-checked'; run: number; lost: readonly string[] };

export type LogLevel = 'error' | 'warn' | 'notice' | 'info' | 'debug';

/** What to do, as values: the shell carries them out in order. */
export type Effect =
  | { kind: 'spawn'; run: number }
  /** A reload: run N starts beside the current one (no controlling terminal; the health checks stay the current's). */
  | { kind: 'spawn-next'; run: number }
  /**
   * Run `to` is the current run from now on, `from` beside it (retired, or exited); the health checks begin for
   * `to`, start period included, keeping the verdict (`kept`: it took over a serving run) or anew.
   */
  | { kind: 'hand-over'; from: number; to: number; health: 'kept' | 'anew' }
  /** A run's retiring begins (its own summary counts from now), and ends: its one summary line, with its status. */
  | { kind: 'begin-retire'; run: number }
  | { kind: 'end-retire'; run: number; exit: CommandExit | undefined; cause: RetireCause }
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
   * then SIGCONT to `cont` (stopped, and had the stop signal), and to `pm2Cont` once pm2's stop is under way.
   * `held`: relayers left out, said in the log.
   */
  | {
      kind: 'stop-round';
      /** A retiring run's round (its part of the look, its ledger); undefined: the stop's, over the whole tree. */
      run: number | undefined;
      snapshot: Snapshot;
      route: Route;
      signal: SignalName;
      targets: Target[];
      pm2Kill: Pm2Manager[];
      /** A stop signal received again, to everyone the stop signal reached. */
      again: { signal: SignalName; targets: Target[] } | undefined;
      cont: ProcessInfo[];
      pm2Cont: ProcessInfo[];
      held: ProcessInfo[];
    }
  /**
   * SIGKILL for run N's command group (while its command is unreaped), then for everything of each look (`run`: a
   * retiring run's part of it).
   */
  | { kind: 'kill-command-group'; run: number }
  | { kind: 'kill-round'; run: number | undefined; snapshot: Snapshot }
  /** SIGKILL did not end these (uninterruptible sleep): name them and give up. */
  | { kind: 'give-up-killing'; run: number | undefined; alive: ProcessInfo[] }
  /** The stop's one summary line. */
  | { kind: 'end-stop' }
  /** The last reap before the exit: zombies whose threads are still exiting are waited for. */
  | { kind: 'sweep' }
  | { kind: 'end'; exitCode: number; exit: CommandExit }
  /** Ask the kernel now who of run N takes a held socket (answered by socket-taken inputs, then `takers-sampled`). */
  | { kind: 'sample-takers'; run: number; why: SampleWhy }
  /** Before run N's spawn: is each held socket still listening? (answered by `sockets-checked`) */
  | { kind: 'check-sockets'; run: number }
  /** gsup's word to run N's preload, on its report channel: one process that took a held socket reads it. */
  | { kind: 'tell'; run: number; word: 'drain' | 'closing' }
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
    beside: undefined,
    reloads: NO_RELOADS,
  };
  return { phase: 'starting', tally };
}
