import type { ProcessInfo, SignalName } from '../../platform/types.js';
import { exitStatus, EXIT_INTERNAL } from './exit-status.js';
import { describeExit, formatDuration } from './format.js';
import { onExitAction } from './on-exit.js';
import { done, ending, enterRestart, exitCode, finish, log, planOf, spawn } from './outcomes.js';
import { behindWrapper, sumBehind } from './outcomes.js';
import { appSaid, readyTimedOut } from './ready-word.js';
import { decideRestart } from './restart.js';
import type { CommandExit } from '../children/spawn.js';
import { runOn, type Effect, type Facts, type In, type Input, type Out, type State, type TimerName } from './state.js';
import { beginKilling, beginStop, endStop, newStop, sendStop, stopSignal } from './stop-sequence.js';

// Every decision of a supervision, as one pure function: step(state, input, facts) → { state, effects }.
// It touches nothing: the shell (supervisor.ts) carries out the effects and brings back what happened.

export { initialState } from './state.js';
export type { Effect, Facts, Input, MachineConfig, Phase, State, TimerName } from './state.js';

// Looks while a stop waits for the tree to empty; a SIGCHLD calls one sooner.
const STOP_POLL_MS = 20;
// Looks while gsup stays for daemons the command left; SIGCHLD wakes it for its own children.
const DAEMON_POLL_MS = 1000;
// A process in uninterruptible sleep can outlive SIGKILL; give up saying so.
const MAX_KILL_MS = 5000;
// At the end, zombies whose threads are still exiting are waited for this often, this many times.
const SWEEP_MS = 5;
const MAX_SWEEPS = 200;

/** The one place state changes. */
export function step(state: State, input: Input, facts: Facts): { state: State; effects: Effect[] } {
  const effects: Effect[] = [];
  return { state: state.phase === 'done' ? state : decide(state, input, facts, effects), effects };
}

function decide(state: State, input: Input, facts: Facts, out: Out): State {
  switch (input.kind) {
    case 'start':
      return state.phase === 'starting' ? start(state, input.stopFirst, facts, out) : state;
    case 'stop-signal':
      return stopSignal(state, input.signal, input.reason, facts, out);
    case 'command-exit':
      return commandExit(state, input, facts, out);
    case 'reaped':
      return reaped(state, input.exits, facts);
    case 'child-gone':
      return childGone(state, input.treeGone, facts, out);
    case 'looked':
      return looked(state, input, facts, out);
    case 'timer':
      return timer(state, input.name, facts, out);
    case 'health':
      return health(state, input.run, input.unhealthy, facts, out);
    case 'app-said':
      return appSaid(state, input, facts, out);
    case 'swept':
      return swept(state, input.notYet, facts, out);
    case 'fault':
      return fault(state, input.message, facts, out);
  }
}

function start(state: In<'starting'>, stopFirst: SignalName | undefined, facts: Facts, out: Out): State {
  if (!stopFirst) return spawn(state.record, facts, out);
  log(out, 'notice', 'stop', `${stopFirst} received before the command started: not starting it`, {
    signal: stopFirst,
  });
  return done(state.record, { code: null, signal: stopFirst }, 128 + facts.signalNumber(stopFirst), out);
}

// ── the command's exit, restarts, daemons ─────────────────────────────────

function commandExit(state: State, input: Extract<Input, { kind: 'command-exit' }>, facts: Facts, out: Out): State {
  if (state.phase === 'starting' || state.phase === 'done' || input.run !== state.run.id) return state;
  const { exit } = input;
  if (exit.errorCode !== undefined) return finish({ phase: 'ending', record: state.record, run: state.run, exit }, out);
  const { behind } = state.record;
  const record = behind ? { ...state.record, behind: { ...behind, wrapper: input.wrapper } } : state.record;
  if (state.phase === 'ending') return finish({ ...state, record, exit }, out);
  const stopping = state.phase === 'stop-delay' || state.phase === 'stopping' || state.phase === 'killing';
  if (stopping) return childGone({ ...state, record, exit }, input.treeGone, facts, out);
  if (state.phase !== 'running') return childGone(state, input.treeGone, facts, out);
  const decision = decideRestart(
    state.record.restarts,
    facts.config,
    exit,
    facts.now - state.run.startedAt,
    input.sent,
  );
  const restart = planOf(decision.decision, facts);
  if (!restart && decision.decision.reason) log(out, 'warn', 'restart-give-up', `command ${decision.decision.reason}`);
  const exited: In<'exited'> = {
    phase: 'exited',
    record: { ...state.record, restarts: decision.state },
    run: state.run,
    exit,
    restart,
  };
  if (facts.config.onExit === 'exit' && !restart) return finish(ending(exited), out);
  // A pm2 pid file may lead to a God daemon the command started elsewhere (or an older one to name): look then.
  if (!input.mayHaveDaemon && input.treeGone) return afterExit(exited, [], undefined, facts, out);
  out.push({ kind: 'look', delayMs: 0 });
  return exited;
}

/** What the command left: stop it before a restart, or as `--on-exit` says (stop, stay, or exit). */
function afterExit(
  state: In<'exited'>,
  leftovers: ProcessInfo[],
  commandPgid: number | undefined,
  facts: Facts,
  out: Out,
): State {
  const { exit, restart } = state;
  if (restart) {
    if (leftovers.length === 0) return enterRestart(state, restart, out);
    // The restart's own line (with its count) follows the stop: this one says only why the stop comes first.
    const reason = `command exited (${describeExit(exit)}) leaving ${leftovers.length} process(es), before its restart`;
    return beginStop(state, newStop('SIGTERM', 'restart', 'gsup', restart), reason, 0, facts, out);
  }
  const action = onExitAction(facts.config.onExit, exitStatus(exit, [], facts.signalNumber), leftovers, commandPgid);
  if (action === 'exit') return finish(ending(state), out);
  const left = `leaving ${leftovers.length} process(es)`;
  if (action === 'stop')
    return beginStop(
      state,
      newStop('SIGTERM', 'exit', 'gsup'),
      `command exited (${describeExit(exit)}) ${left}`,
      0,
      facts,
      out,
    );
  log(
    out,
    'notice',
    'waiting',
    `command exited (${describeExit(exit)}); waiting for ${leftovers.length} remaining process(es)`,
    {
      pids: leftovers.map((info) => info.pid),
    },
  );
  out.push({ kind: 'look', delayMs: DAEMON_POLL_MS });
  // `auto` stays for daemons the command handed its work to: their status becomes gsup's.
  return {
    phase: 'daemons',
    record: { ...state.record, stayed: facts.config.onExit === 'auto' },
    run: state.run,
    exit,
  };
}

// ── the tree, children, timers, health ────────────────────────────────────

/**
 * Exits gsup reaped. Staying for daemons (`auto`), the last one's status
 * becomes gsup's; since a stop began, they say what ran behind the command.
 */
function reaped(state: State, exits: readonly CommandExit[], facts: Facts): State {
  if (exits.length === 0) return state;
  let { record } = state;
  if (record.stayed) record = { ...record, daemonExit: exits[exits.length - 1] };
  if (record.behind) record = { ...record, behind: sumBehind(record.behind, exits, facts) };
  return record === state.record ? state : { ...state, record };
}

/** A child of gsup is gone: end the wait of a stop or for daemons if that was the last, else look sooner. */
function childGone(state: State, treeGone: boolean, facts: Facts, out: Out): State {
  if (
    state.phase !== 'stop-delay' &&
    state.phase !== 'stopping' &&
    state.phase !== 'killing' &&
    state.phase !== 'daemons'
  )
    return state;
  if (!treeGone) {
    out.push({ kind: 'look', delayMs: 0 });
    return state;
  }
  return state.phase === 'daemons' ? finish(ending(state), out) : endStop(state, facts, out);
}

function looked(state: State, input: Extract<Input, { kind: 'looked' }>, facts: Facts, out: Out): State {
  const gone = input.alive.length === 0;
  switch (state.phase) {
    case 'exited':
      return afterExit(state, input.alive, input.commandPgid, facts, out);
    case 'stop-delay':
      // A stop delay ends too when the tree goes away by itself: nothing is left to wait for.
      return gone ? endStop(state, facts, out) : state;
    case 'stopping':
      // 3. Each look while stopping: the stop signal to every root not reached yet, until nothing is left.
      if (gone) return endStop(state, facts, out);
      out.push(
        { kind: 'stop-round', signal: state.stop.signal, again: state.stop.again },
        { kind: 'look', delayMs: STOP_POLL_MS },
      );
      return { ...state, stop: { ...state.stop, again: undefined } };
    case 'killing':
      if (gone) return endStop(state, facts, out);
      if (facts.now - state.killStartedAt > MAX_KILL_MS) {
        out.push({ kind: 'give-up-killing' });
        return endStop(state, facts, out);
      }
      out.push({ kind: 'kill-round' }, { kind: 'look', delayMs: 1 });
      return state;
    case 'daemons':
      if (gone) return finish(ending(state), out);
      out.push({ kind: 'look', delayMs: DAEMON_POLL_MS });
      return state;
    default:
      return state;
  }
}

function timer(state: State, name: TimerName, facts: Facts, out: Out): State {
  switch (name) {
    case 'stop-delay':
      return state.phase === 'stop-delay' ? sendStop(state, facts, out) : state;
    case 'kill-timeout': {
      if (state.phase !== 'stopping') return state;
      const killing = beginKilling(state, facts, out); // the SIGKILL first, then the line that says so
      log(
        out,
        'warn',
        'kill-timeout',
        `kill timeout (${formatDuration(facts.config.killTimeout)}) expired: sending SIGKILL`,
      );
      return killing;
    }
    case 'restart-delay':
      return state.phase === 'restarting' ? spawn(state.record, facts, out) : state;
    case 'finish':
      return state.phase === 'ending' ? finish(state, out) : state;
    case 'health':
      // Time for a round of probes while the command (or what it handed over) runs; deciding what next: ask again later.
      if (state.phase === 'exited' && facts.config.probes) out.push({ kind: 'schedule-probe' });
      if (state.phase === 'running' || state.phase === 'daemons') out.push({ kind: 'probe', run: state.run.id });
      return state;
    case 'ready-timeout':
      return readyTimedOut(state, facts, out);
    case 'check':
      return state; // the shell's own watch for a lost SIGCHLD
  }
}

function health(state: State, run: number, unhealthy: boolean, facts: Facts, out: Out): State {
  if (!runOn(state) || run !== state.run.id) return state;
  if (!unhealthy) {
    if (facts.config.probes) out.push({ kind: 'schedule-probe' });
    return state;
  }
  // A hung event loop will not handle SIGTERM: the kill timeout ends it.
  return beginStop(
    state,
    newStop('SIGTERM', facts.config.restart === 'never' ? 'exit' : 'restart', 'unhealthy'),
    'unhealthy',
    0,
    facts,
    out,
  );
}

// ── the end ───────────────────────────────────────────────────────────────

function swept(state: State, notYet: number, facts: Facts, out: Out): State {
  if (state.phase !== 'ending' || !state.exit) return state;
  if (notYet > 0 && state.record.sweeps < MAX_SWEEPS) {
    out.push({ kind: 'set-timer', name: 'finish', ms: SWEEP_MS });
    return { ...state, record: { ...state.record, sweeps: state.record.sweeps + 1 } };
  }
  // Having stayed for daemons, the last one's status; behind a wrapper that died of the stop signal, what it
  // ran; else the command's.
  const behind = state.record.daemonExit ? undefined : behindWrapper(state.record.behind, state.exit, facts);
  if (behind) {
    const died = `the command died of ${describeExit(state.exit)}, as a wrapper does when it passes the stop on`;
    log(out, 'info', 'status-behind', `${died}; what it ran exited (${describeExit(behind)}): gsup exits with that`, {
      code: behind.code,
      signal: behind.signal,
    });
  }
  const exit = state.record.daemonExit ?? behind ?? state.exit;
  return done(state.record, exit, exitCode(state.record, exit, facts), out);
}

/**
 * An internal error: log it, then stop the tree with the normal sequence
 * (never leave it running) and exit 125. An error while stopping kills;
 * one while killing looks again and kills what is left; only errors that
 * keep coming (a fourth) end gsup at once.
 */
function fault(state: State, message: string, facts: Facts, out: Out): State {
  const record = { ...state.record, faults: state.record.faults + 1 };
  log(out, 'error', 'internal', `internal error: ${message}`);
  const unknown: CommandExit = { code: null, signal: null };
  switch (state.phase) {
    case 'starting':
    case 'done':
      return done(record, unknown, EXIT_INTERNAL, out);
    case 'running':
    case 'exited':
    case 'daemons':
      return beginStop({ ...state, record }, newStop('SIGTERM', 'exit', 'gsup'), 'internal error', 0, facts, out);
    case 'restarting':
      return finish(ending({ ...state, record }), out);
    case 'stop-delay':
      return sendStop({ ...state, record }, facts, out);
    case 'stopping':
      return beginKilling({ ...state, record, stop: { ...state.stop, then: 'exit', plan: undefined } }, facts, out);
    case 'killing':
      // Keep killing (the next look SIGKILLs what is left); only errors that repeat end it.
      if (record.faults > 3) return done(record, state.exit ?? unknown, EXIT_INTERNAL, out);
      out.push({ kind: 'look', delayMs: 0 });
      return { ...state, record };
    case 'ending':
      if (record.faults > 3 || !state.exit) return done(record, state.exit ?? unknown, EXIT_INTERNAL, out);
      return finish({ ...state, record }, out);
  }
}
