import type { SignalName } from '../../../platform/types.js';
import type { GroupSent } from '../ledger/continuity.js';
import { formatDuration } from '../format.js';
import { EMPTY_LEDGER, roundSent as ledgerSent, type Ledger } from '../ledger/ledger.js';
import { log, retired, sayLeavers } from '../outcomes/outcomes.js';
import { MAX_KILL_MS, STOP_POLL_MS } from '../ledger/pace.js';
import { sendRound } from '../ledger/round.js';
import type { Retiring, RetireCause, Run } from './run.js';
import type { Facts, Input, Out, State, Stop, Tally } from '../state.js';
import type { CommandExit, Snapshot } from '../values.js';

// A retiring run: the stop sequence's steps 2–5 for one run's tree alone, beside the current run (a reload). Its
// stop signal once to each root of its part of the tree (its own ledger), SIGCONT where stopped, its own kill
// timeout, SIGKILL rounds over its part; nothing of the other run. A stop of the whole tree takes its ledger over.

/** The part of a look that is run N's (Snapshot.runs): what its rounds see, and wait for. */
export function partOf(snapshot: Snapshot, run: number): Snapshot {
  const runs = snapshot.runs;
  const mine = (info: { pid: number }) => runs?.get(info.pid) === run;
  return {
    ...snapshot,
    members: snapshot.members.filter(mine),
    alive: snapshot.alive.filter(mine),
    joined: snapshot.joined.filter(mine),
    left: [],
    leftCommands: [],
    judgments: undefined,
  };
}

/** The retiring run, if one is. */
export function retiringOf(tally: Tally): Retiring | undefined {
  return tally.beside?.role === 'retiring' ? tally.beside : undefined;
}

function withRetiring(state: State, retiring: Retiring | undefined): State {
  return { ...state, tally: { ...state.tally, beside: retiring } };
}

/**
 * The next look carries a round of a retiring run's stop signal (the shell plans it on the run's part of the
 * look): while its signal is still going out, and no stop of the whole tree has taken its rounds over.
 */
export function retireRoundSignal(state: State): { run: number; signal: SignalName } | undefined {
  const retiring = retiringOf(state.tally);
  if (!retiring || retiring.killedAt !== undefined || retiring.gone || retiring.cause === 'cut') return undefined;
  if (retiring.draining) return undefined;
  if (state.phase === 'stopping' || state.phase === 'killing') return undefined;
  return { run: retiring.run.id, signal: retiring.signal };
}

/**
 * 2. A run's retiring begins: its kill timeout starts, and its stop signal goes out on a fresh look. Given a drain
 * limit (a reload's old run whose preload was told to drain: drain.ts), it drains first: no signal until drained.
 */
export function beginRetire(
  state: State,
  run: Run,
  cause: RetireCause,
  exit: CommandExit | undefined,
  facts: Facts,
  out: Out,
  drainMs?: number,
): State {
  out.push({ kind: 'begin-retire', run: run.id });
  const retiring: Retiring = {
    role: 'retiring',
    run,
    cause,
    signal: facts.config.retireSignal,
    ledger: EMPTY_LEDGER,
    since: facts.now,
    killedAt: undefined,
    exit,
    gone: false,
  };
  if (drainMs === undefined) return withRetiring(state, signalRetiring(retiring, facts, out));
  out.push({ kind: 'set-timer', name: 'drain-limit', ms: drainMs });
  return withRetiring(state, { ...retiring, draining: true });
}

/** Its stop signal from now on: its kill timeout starts, and a round goes out on a fresh look. */
function signalRetiring(retiring: Retiring, facts: Facts, out: Out): Retiring {
  // A rule made the stop signal SIGKILL (`-r TERM:KILL`): its tree is killed at once.
  if (retiring.signal === 'SIGKILL') {
    out.push({ kind: 'kill-command-group', run: retiring.run.id });
    retiring = { ...retiring, killedAt: facts.now };
  } else out.push({ kind: 'set-timer', name: 'retire-kill-timeout', ms: facts.config.killTimeout });
  out.push({ kind: 'look', delayMs: 0 });
  return { ...retiring, draining: false, since: facts.now };
}

/**
 * The drain is over (drained, the drain limit, or a stop of the whole tree begins): the retiring run's stop signal
 * goes, its kill timeout starts.
 */
export function endDrain(tally: Tally, facts: Facts, out: Out): Tally {
  const retiring = retiringOf(tally);
  if (!retiring?.draining) return tally;
  out.push({ kind: 'clear-timer', name: 'drain-limit' });
  return { ...tally, beside: signalRetiring(retiring, facts, out) };
}

/**
 * 3. A look while a run retires: the end once nothing of its part lives (and its command's exit is known), else
 * a round of its stop signal on the route the shell planned (SIGKILL once its kill timeout came), then a look soon.
 */
export function retireLooked(state: State, input: Extract<Input, { kind: 'looked' }>, facts: Facts, out: Out): State {
  let retiring = retiringOf(state.tally);
  if (!retiring || retiring.gone) return state;
  // A look from before the second run was known has no parts: the next one has. Never past what SIGKILL may take:
  // a retire that no look can end any more ends there (see besideEnds, queries.ts).
  if (!input.snapshot.runs) {
    if (!killedLong(retiring, facts)) return (out.push({ kind: 'look', delayMs: STOP_POLL_MS }), state);
    const message = `run ${retiring.run.id}'s part of the tree is told apart no more: it is no longer waited for`;
    log(out, 'warn', 'retire-unseen', message, { run: retiring.run.id });
    return endRetire(state, givenUp(retiring), out);
  }
  const part = partOf(input.snapshot, retiring.run.id);
  if (part.alive.length === 0) {
    retiring = { ...retiring, gone: true };
    return retiring.exit ? endRetire(state, retiring, out) : withRetiring(state, retiring);
  }
  if (retiring.draining) return state; // its stop signal waits for the drain
  // A stop of the whole tree is killing: its rounds reach this part too. A run it cut short has no rounds of its own.
  if (state.phase === 'killing') return withRetiring(state, { ...retiring, killedAt: retiring.killedAt ?? facts.now });
  if (retiring.cause === 'cut') return state;
  if (retiring.killedAt !== undefined) {
    if (killedLong(retiring, facts)) {
      out.push({ kind: 'give-up-killing', run: retiring.run.id, alive: part.alive });
      return endRetire(state, givenUp(retiring), out);
    }
    out.push({ kind: 'kill-round', run: retiring.run.id, snapshot: part }, { kind: 'look', delayMs: 1 });
    return state;
  }
  // A stop of the whole tree sends to every root (the retiring run's ledger in its own): it looks on its own pace.
  if (state.phase === 'stopping') return state;
  const route = input.retireRoute;
  if (route) {
    const round = { run: retiring.run.id, ledger: retiring.ledger, signal: retiring.signal, again: undefined };
    retiring = { ...retiring, ledger: sendRound(round, part, route, retiring.exit !== undefined, out) };
  }
  out.push({ kind: 'look', delayMs: STOP_POLL_MS });
  return withRetiring(state, retiring);
}

/** SIGKILL rounds began longer ago than SIGKILL may take (a process in uninterruptible sleep): given up on. */
function killedLong(retiring: Retiring, facts: Facts): boolean {
  return retiring.killedAt !== undefined && facts.now - retiring.killedAt > MAX_KILL_MS;
}

/**
 * The whole tree is gone (a stop of it ended, or gsup has no child left): so is the part of it a run beside was
 * retiring, or a stop cut short. It ends now when its command's exit is known, else with that exit (libuv reports
 * it). Nothing else would end it: the looks that follow may be of a tree whose runs are told apart no more.
 */
export function retireWithTree<S extends State>(state: S, out: Out): S {
  const retiring = retiringOf(state.tally);
  if (!retiring || retiring.gone) return state;
  const gone = { ...retiring, gone: true };
  // Its tally alone changes: the phase (and its data) is the one given.
  return (gone.exit ? endRetire(state, gone, out) : withRetiring(state, gone)) as S;
}

/** What a retiring run's round sent as whole groups, and when: its own ledger keeps it (see continuity.ts). */
export function retireSent(state: State, run: number, groups: readonly GroupSent[], out: Out): State {
  const retiring = retiringOf(state.tally);
  if (!retiring || retiring.run.id !== run) return state;
  const { ledger, leavers } = ledgerSent(retiring.ledger, groups, retiring.signal);
  sayLeavers(leavers, retiring.signal, out);
  return withRetiring(state, { ...retiring, ledger });
}

/** 4. Its own kill timeout: SIGKILL for its command's group now, then for its part of each look until none is left. */
export function retireKillTimeout(state: State, facts: Facts, out: Out): State {
  const retiring = retiringOf(state.tally);
  if (!retiring || retiring.killedAt !== undefined || retiring.gone || retiring.draining) return state;
  out.push({ kind: 'kill-command-group', run: retiring.run.id }, { kind: 'look', delayMs: 0 });
  const timeout = formatDuration(facts.config.killTimeout);
  log(
    out,
    'warn',
    'reload-kill-timeout',
    `run ${retiring.run.id}'s kill timeout (${timeout}) expired: sending SIGKILL`,
    {
      run: retiring.run.id,
    },
  );
  return withRetiring(state, { ...retiring, killedAt: facts.now });
}

/** The retiring run's command exited: its status, kept for its summary; the end, if nothing of it is left. */
export function retireExit(state: State, exit: CommandExit, out: Out): State {
  const retiring = retiringOf(state.tally);
  if (!retiring) return state;
  const exited = { ...retiring, exit };
  if (exited.gone) return endRetire(state, exited, out);
  out.push({ kind: 'look', delayMs: 0 });
  return withRetiring(state, exited);
}

/** A child of gsup left: the retiring run may be gone; look sooner. */
export function retireChildGone(state: State, out: Out): State {
  const retiring = retiringOf(state.tally);
  if (retiring && !retiring.gone) out.push({ kind: 'look', delayMs: 0 });
  return state;
}

/** 5. Its tree is gone: its summary line, counted (outcomes.ts). */
function endRetire(state: State, retiring: Retiring, out: Out): State {
  return { ...state, tally: retired(state.tally, retiring, out) };
}

/**
 * A stop of the whole tree sends its signal while a run retires: the roots that have had the retiring run's stop
 * signal are in the stop's ledger, so the stop's first signal reaches the other run alone, and a second (sent to
 * everyone the stop signal reached) both.
 */
export function takeOverRetiring(stop: Stop, tally: Tally): Stop {
  const retiring = retiringOf(tally);
  if (!retiring) return stop;
  return { ...stop, ledger: joined(stop.ledger, retiring.ledger) };
}

function joined(a: Ledger, b: Ledger): Ledger {
  const union = <T>(x: ReadonlySet<T>, y: ReadonlySet<T>) => (y.size === 0 ? x : new Set([...x, ...y]));
  return {
    reached: union(a.reached, b.reached),
    groups: union(a.groups, b.groups),
    pm2Killed: union(a.pm2Killed, b.pm2Killed),
    sent: [...a.sent, ...b.sent],
    held: union(a.held, b.held),
    continued: union(a.continued, b.continued),
  };
}

/** Given up on (SIGKILL had its time): gone, with no status of its own when none came. */
function givenUp(retiring: Retiring): Retiring {
  return { ...retiring, gone: true, exit: retiring.exit ?? { code: null, signal: null } };
}
