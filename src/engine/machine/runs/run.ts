import type { SignalName } from '../../../platform/types.js';
import type { Ledger } from '../ledger/ledger.js';
import type { CommandExit } from '../values.js';

// A run as the pure step holds it (with what it did with the held sockets, --listen), and the second one it may
// hold during a reload (--reload-signal).

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
  /** gsup's word to the run's preload (a drain, or the final stop's delay), once told. */
  readonly told?: Told;
}

/** gsup's words to the run's preload on its report channel (engine/listen/wire.ts's TellWord). */
export type TellWord = 'drain' | 'closing';

/**
 * A word told to a run: each process that took a held socket reads one (then no more), and answers with its open
 * connections (`conns`); the next word goes out once one answers, until every such process had one.
 */
export interface Told {
  readonly word: TellWord;
  readonly since: number;
  /** The processes that took a held socket (by their word) when it was told: each is to hear it. */
  readonly pids: readonly number[];
  /** Words written so far. */
  readonly sent: number;
  /** What each process said it holds, by pid (a process gone holds none). */
  readonly conns: ReadonlyMap<number, number>;
}

/** One run of the command, as step knows it. */
export interface Run {
  readonly id: number;
  readonly startedAt: number;
  /** `ready` from the start without --wait-ready; a reload's next run waits for its word, or its first listen. */
  readonly app: AppWord;
  /** Under --listen, once anything was heard of it. */
  readonly held?: RunHeld;
}

/**
 * The run beside the current one during a reload: the **next** run, started
 * while the current one serves; or a run being **retired**, the stop
 * sequence's steps 2–5 for its own tree alone (the old run once its successor
 * is ready, a next run that failed, or what an old run that exited first left).
 */
export type Beside = Next | Retiring;

export interface Next {
  readonly role: 'next';
  readonly run: Run;
  /** Its ready timeout came: the kernel is asked one last time who of it listens, and the reload fails after. */
  readonly lastSample?: boolean;
}

/**
 * Why a run is retired: its successor is ready; it failed to get ready; it exited first (its leftovers); or a stop
 * of the whole tree cut its start short (`cut`: the stop's rounds and kill timeout reach it, it has none of its own).
 */
export type RetireCause = 'reloaded' | 'failed' | 'exited' | 'cut';

export interface Retiring {
  readonly role: 'retiring';
  readonly run: Run;
  readonly cause: RetireCause;
  /** Its stop signal (SIGTERM, after -r), sent once to each root of its tree. */
  readonly signal: SignalName;
  /** Who of its tree has had its stop signal: its own ledger, beside the stop's (a stop takes it over: seeded). */
  readonly ledger: Ledger;
  /** When its stop began. */
  readonly since: number;
  /** When SIGKILL rounds began (its kill timeout, or a stop's), if they did. */
  readonly killedAt: number | undefined;
  /** Its command's exit, once reported. */
  readonly exit: CommandExit | undefined;
  /** A look found nothing of its tree alive. */
  readonly gone: boolean;
  /** Its preload drains its connections (a reload's old run): no stop signal until drained or the drain limit. */
  readonly draining?: boolean;
}

/** The reloads so far (what /metrics counts), and a reload signal that waits for the reload under way to end. */
export interface Reloads {
  readonly ok: number;
  readonly failed: number;
  readonly killed: number;
  /** Runs a reload started that did not become restarts (gsup_restarts_total leaves them out). */
  readonly runs: number;
  /** A reload signal taken when what is under way ends (its reason, for the log): none waiting. */
  readonly pending: string | undefined;
}

export const NO_RELOADS: Reloads = { ok: 0, failed: 0, killed: 0, runs: 0, pending: undefined };

/**
 * Why the kernel is asked who of a run takes a held socket now: a next run's ready timeout came (one last look
 * before the reload fails), or a run is old enough to be warned of a held socket none of it took.
 */
export type SampleWhy = 'next-ready' | 'untaken';

/** What a run said of the held sockets on its report channel (or the kernel showed: `via`), and the channel's end. */
export type HeldInput =
  /** `word`: its own, on the report channel; `kernel`: seen watching it (epoll) or in accept(2) on it. */
  | { kind: 'socket-taken'; run: number; name: string; pid: number; seen: 'word' | 'kernel' }
  | { kind: 'socket-closed'; run: number; name: string; pid: number }
  /** A process of run N, told a word, holds `count` connections (then as it changes, during a drain). */
  | { kind: 'conns'; run: number; pid: number; count: number }
  /** Every holder of run N's report channel is gone (its EOF). */
  | { kind: 'report-closed'; run: number }
  /** The kernel was asked (sample-takers): what it showed came first, as socket-taken. */
  | { kind: 'takers-sampled'; run: number; why: SampleWhy };
