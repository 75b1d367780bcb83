import { tell } from './drain.js';
import { describeExit, describeStartFailure, formatDuration } from '../format.js';
import { log } from '../outcomes/outcomes.js';
import { beginRetire } from './retire.js';
import { EMPTY_LEDGER } from '../ledger/ledger.js';
import { watchTakes } from '../held/untaken.js';
import type { Next, Retiring, Run } from './run.js';
import type { Facts, In, Input, Out, State, Tally } from '../state.js';
import type { CommandExit } from '../values.js';

// A reload (--reload-signal): the next run starts beside the serving one, drained (drain.ts) and retired once the
// next is ready (retire.ts); while one is under way: the next run's word, exit, ready timeout, the old run exiting
// first, a stop, another reload signal.

/** The next run's ready timeout when --ready-timeout is not given. */
export const RELOAD_READY_MS = 30_000;

/** How long a next run has to be ready: --ready-timeout, else RELOAD_READY_MS. */
const readyMs = (facts: Facts) => facts.config.readyTimeout ?? RELOAD_READY_MS;

/** The next run, while one starts. */
export function nextOf(tally: Tally): Next | undefined {
  return tally.beside?.role === 'next' ? tally.beside : undefined;
}

function pending(tally: Tally, reason: string | undefined): Tally {
  return { ...tally, reloads: { ...tally.reloads, pending: reason } };
}

/**
 * The reload signal. Before the first spawn, during a stop, or with only what the command left supervised:
 * dropped, one line. During a reload: taken when it ends (signals that come meanwhile are one). Otherwise taken
 * now (settleReload).
 */
export function reloadSignal(state: State, reason: string, facts: Facts, out: Out): State {
  const dropped = droppedBecause(state);
  if (dropped) {
    log(out, 'notice', 'reload-dropped', `${reason}: dropped (${dropped})`);
    return state.tally.reloads.pending === undefined ? state : { ...state, tally: pending(state.tally, undefined) };
  }
  const tally = pending(state.tally, reason);
  if (state.tally.beside) {
    log(out, 'notice', 'reload-later', `${reason} during a reload: taken when it ends`);
    return { ...state, tally };
  }
  return settleReload({ ...state, tally }, facts, out);
}

/**
 * Why a reload signal is dropped now, if it is: before the first spawn, during a stop (not one before a restart:
 * the restart takes it), at the end, or with the command gone and only what it left supervised.
 */
function droppedBecause(state: State): string | undefined {
  switch (state.phase) {
    case 'starting':
      return 'the command has not started yet';
    case 'stop-delay':
    case 'stopping':
    case 'killing':
      return state.stop.then === 'restart' ? undefined : 'a stop is under way';
    case 'ending':
    case 'done':
      return 'a stop is under way';
    case 'daemons':
      return 'the command has exited; what it left is not reloaded';
    default:
      return undefined;
  }
}

/**
 * A reload signal waiting is taken once no reload is under way: running, the next run starts; in a restart's
 * back-off, the next run starts now; the command just exited, or a stop before a restart: the restart takes it.
 * During a stop, or with the command gone and only what it left supervised: dropped with one line.
 */
export function settleReload(state: State, facts: Facts, out: Out): State {
  const reason = state.tally.reloads.pending;
  if (reason === undefined || state.tally.beside) return state;
  const taken = { ...state, tally: pending(state.tally, undefined) } as State;
  if (state.phase === 'running') return startNext(taken as In<'running'>, reason, facts, out);
  if (state.phase === 'restarting') {
    log(out, 'notice', 'reload-now', `${reason}: the restart's back-off cut short, the next run starts now`);
    // The restart's own way to its spawn (a held socket's check first): its timer, now.
    out.push({ kind: 'set-timer', name: 'restart-delay', ms: 0 });
    return taken;
  }
  const dropped = droppedBecause(state);
  if (!dropped) return state; // the command just exited, or a stop before a restart: decided later
  if (state.phase !== 'done') log(out, 'notice', 'reload-dropped', `${reason}: dropped (${dropped})`);
  return taken;
}

/** The next run starts beside the serving one, waiting for its word (or its first listen on a held socket). */
function startNext(state: In<'running'>, reason: string, facts: Facts, out: Out): State {
  const id = state.tally.runs + 1;
  const next: Run = { id, startedAt: facts.now, app: 'waiting' };
  const ms = readyMs(facts);
  out.push({ kind: 'spawn-next', run: id }, { kind: 'set-timer', name: 'next-ready-timeout', ms });
  const when = facts.config.waitReady ? 'says it is ready' : 'listens on a held socket';
  const serving = state.run.id;
  const message = `${reason}: reloading: run ${id} starts beside run ${serving}, retired once run ${id} ${when}`;
  log(out, 'notice', 'reload', `${message} (ready timeout ${formatDuration(ms)})`, {
    run: id,
    serving,
    readyTimeoutMs: ms,
  });
  const { reloads } = state.tally;
  const tally: Tally = {
    ...state.tally,
    runs: id,
    beside: { role: 'next', run: next },
    reloads: { ...reloads, runs: reloads.runs + 1 },
  };
  return { ...state, tally };
}

/**
 * The next run is ready (its word, or its first listen): it becomes the current run, the health checks begin for
 * it (start period included, the verdict kept: it takes over a serving run), and the old run is retired.
 */
export function nextReady(state: State, run: number, via: string, facts: Facts, out: Out): State {
  const next = nextOf(state.tally);
  if (!next || next.run.id !== run || state.phase !== 'running') return state;
  const old = state.run;
  const took = formatDuration(facts.now - next.run.startedAt);
  out.push(
    { kind: 'clear-timer', name: 'next-ready-timeout' },
    { kind: 'clear-timer', name: 'ready-timeout' },
    { kind: 'hand-over', from: old.id, to: run, health: 'kept' },
  );
  const { retireSignal, killTimeout, reloadDrain } = facts.config;
  const drained = tell(old, 'drain', facts, out); // its preload drains it first (drain.ts)
  const signal = `${retireSignal} (kill timeout ${formatDuration(killTimeout)})`;
  const draining = `draining run ${old.id} (drain limit ${formatDuration(reloadDrain)}), then ${signal}`;
  const retire = drained ? draining : `retiring run ${old.id} with ${signal}`;
  log(out, 'notice', 'reload-ready', `run ${run} is ready (${via}) ${took} after its start: ${retire}`, {
    run,
    via,
    ms: facts.now - next.run.startedAt,
    retired: old.id,
  });
  const current: State = { ...state, run: { ...next.run, app: 'ready' } };
  watchTakes(next.run, facts, out);
  return beginRetire(current, drained ?? old, 'reloaded', undefined, facts, out, drained && reloadDrain);
}

/**
 * The held sockets a next run takes before it is ready: each one the serving run took (a socket it left alone is
 * none of the app's), or every one when what the serving run took is not known.
 */
function wanted(state: State, facts: Facts): { names: readonly string[]; of: string } {
  const open = state.tally.open ?? facts.config.listen?.names ?? [];
  const serving = 'run' in state ? state.run : undefined;
  const took = (serving?.held?.took ?? []).filter((name) => open.includes(name));
  return took.length > 0 ? { names: took, of: `run ${serving!.id} took` } : { names: open, of: 'gsup holds' };
}

/**
 * Without --wait-ready a next run is ready once it listens on the held sockets it should take (wanted): the words
 * its report channel carried (a word counts only for the run whose channel carried it), or what the kernel showed.
 */
export function nextListened(
  state: State,
  input: Extract<Input, { kind: 'socket-taken' }>,
  facts: Facts,
  out: Out,
): State {
  const next = nextOf(state.tally);
  if (facts.config.waitReady || next?.run.id !== input.run) return state;
  const { names, of } = wanted(state, facts);
  if (names.some((name) => !next.run.held?.took.includes(name))) return state;
  const how = input.seen === 'word' ? 'its first listen' : 'the kernel saw it listen';
  const on = names.length === 1 ? `the held socket ${names[0]}` : `every held socket ${of} (${names.join(', ')})`;
  return nextReady(state, input.run, `${how} on ${on}`, facts, out);
}

/**
 * The next run failed: not ready in time, or it exited. It is stopped (its tree alone), the serving run keeps
 * serving untouched; one line, counted as `failed`.
 */
function nextFailed(state: State, next: Next, why: string, exit: CommandExit | undefined, facts: Facts, out: Out) {
  const { reloads } = state.tally;
  const counted: State = { ...state, tally: { ...state.tally, reloads: { ...reloads, failed: reloads.failed + 1 } } };
  out.push({ kind: 'clear-timer', name: 'next-ready-timeout' });
  const serving = 'run' in state ? state.run.id : undefined;
  const stopped = exit ? '' : `; run ${next.run.id} is stopped with ${facts.config.retireSignal}`;
  const message = `run ${next.run.id} ${why}: the reload failed, run ${serving} keeps serving${stopped}`;
  log(out, 'warn', 'reload-failed', message, { run: next.run.id, serving });
  // It never started (its command not found): nothing of it to stop; what was its own goes.
  if (exit?.errorCode !== undefined) {
    out.push({ kind: 'end-retire', run: next.run.id, exit, cause: 'failed' });
    return { ...counted, tally: { ...counted.tally, beside: undefined } };
  }
  return beginRetire(counted, next.run, 'failed', exit, facts, out);
}

/**
 * The next run's ready timeout. Without --wait-ready the kernel is asked once more who of it listens (it is
 * sampled, not watched: a run that says nothing may have listened since), and the reload fails after that.
 */
export function nextTimedOut(state: State, facts: Facts, out: Out): State {
  const next = nextOf(state.tally);
  if (!next || next.lastSample) return state;
  if (!facts.config.listen || facts.config.waitReady) return notReady(state, next, facts, out);
  out.push({ kind: 'sample-takers', run: next.run.id, why: 'next-ready' });
  return { ...state, tally: { ...state.tally, beside: { ...next, lastSample: true } } };
}

/** The last sample of the next run is in: had it made the run ready, it would be no next run now. */
export function nextSampled(state: State, run: number, facts: Facts, out: Out): State {
  const next = nextOf(state.tally);
  return next?.lastSample && next.run.id === run ? notReady(state, next, facts, out) : state;
}

function notReady(state: State, next: Next, facts: Facts, out: Out): State {
  const within = formatDuration(readyMs(facts));
  if (facts.config.waitReady)
    return nextFailed(state, next, `did not say it was ready within ${within}`, undefined, facts, out);
  const took = next.run.held?.took ?? [];
  const missing = wanted(state, facts).names.filter((name) => !took.includes(name));
  const what =
    took.length === 0
      ? 'did not listen on a held socket'
      : `did not listen on the held socket(s) ${missing.join(', ')}`;
  const it = took.length === 0 ? '' : ` (it took ${took.join(', ')})`;
  return nextFailed(state, next, `${what} within ${within}${it}`, undefined, facts, out);
}

/**
 * A command's exit during a reload, when it is not the current run's plain exit: the next run's (a failed reload),
 * the retiring run's (retire.ts), or the old run's before the next was ready: the next run becomes the current
 * one (503 `starting` until ready), counted as a restart without back-off, and what the old one left is retired.
 * Undefined: the current run's exit, decided as ever.
 */
export function besideExit(state: State, input: Extract<Input, { kind: 'command-exit' }>, facts: Facts, out: Out) {
  const next = nextOf(state.tally);
  if (!next) return undefined;
  const { exit } = input;
  const ended = exit.errorCode !== undefined ? describeStartFailure(exit) : `exited (${describeExit(exit)})`;
  if (input.run === next.run.id) {
    const why = exit.errorCode !== undefined ? ended : `${ended} before it was ready`;
    return nextFailed(state, next, why, exit, facts, out);
  }
  if (state.phase !== 'running' || input.run !== state.run.id) return undefined;
  const old = state.run;
  const id = next.run.id;
  log(
    out,
    'notice',
    'reload-exited',
    `run ${old.id} ${ended} before run ${id} was ready: run ${id} is the current run`,
    {
      run: old.id,
      code: exit.code,
      signal: exit.signal,
      signo: exit.signo,
      current: id,
    },
  );
  out.push(
    { kind: 'clear-timer', name: 'next-ready-timeout' },
    { kind: 'clear-timer', name: 'ready-timeout' },
    { kind: 'hand-over', from: old.id, to: id, health: 'anew' },
  );
  // Its ready timeout goes on, as the current run's (a failed start, as --ready-timeout says).
  const left = readyMs(facts) - (facts.now - next.run.startedAt);
  out.push({ kind: 'set-timer', name: 'ready-timeout', ms: Math.max(0, left) });
  watchTakes(next.run, facts, out);
  const { reloads } = state.tally;
  const tally: Tally = { ...state.tally, beside: undefined, reloads: { ...reloads, runs: reloads.runs - 1 } };
  return beginRetire({ phase: 'running', tally, run: next.run }, old, 'exited', exit, facts, out);
}

/**
 * A stop of the whole tree begins while the next run starts (the old one not signalled): one stop of the whole
 * tree, each root once; the next run's ready timeout goes, its exit is none of gsup's status, and it is kept
 * beside (`cut`) until it is gone.
 */
export function foldNext(tally: Tally, facts: Facts, out: Out): Tally {
  const next = nextOf(tally);
  if (!next) return tally;
  out.push({ kind: 'clear-timer', name: 'next-ready-timeout' });
  const { id } = next.run;
  log(out, 'notice', 'reload-cut', `the reload is cut short: run ${id} is stopped with the rest of the tree`, {
    run: id,
  });
  // Still beside, to know when it is gone (its channels go then); the stop's rounds reach it, none of its own.
  const cut: Retiring = {
    ...{ role: 'retiring', run: next.run, cause: 'cut', signal: facts.config.retireSignal, ledger: EMPTY_LEDGER },
    ...{ since: facts.now, killedAt: undefined, exit: undefined, gone: false },
  };
  return { ...tally, beside: cut };
}
