import type { SignalName } from '../../platform/types.js';
import { afterExit, childGone, commandExit, DAEMON_POLL_MS } from './stop/after-exit.js';
import { fault, swept } from './stop/end.js';
import { formatDuration } from './format.js';
import { connsHeard, drainGone, drainLimit } from './runs/drain.js';
import { heard, looked as heldLooked, openAtStart, shutOpen } from './held/held.js';
import { untakenDue, untakenSampled, warnUntaken } from './held/untaken.js';
import { MAX_KILL_MS, STOP_POLL_MS } from './ledger/pace.js';
import { done, ending, finish, log, spawn, sumBehind } from './outcomes/outcomes.js';
import { appSaid, readyTimedOut } from './stop/ready-word.js';
import { besideExit, nextListened, nextSampled, nextTimedOut, reloadSignal, settleReload } from './runs/reload.js';
import {
  retireChildGone,
  retireExit,
  retireKillTimeout,
  retireLooked,
  retireWithTree,
  retiringOf,
} from './runs/retire.js';
import { probesCount, runOn } from './queries.js';
import { sendRound } from './ledger/round.js';
import type { Effect, Facts, In, Input, Out, State, TimerName } from './state.js';
import { beginKilling, beginStop, endStop, newStop, roundSent, sendStop, stopSignal } from './stop/stop-sequence.js';
import type { CommandExit } from './values.js';

// Every decision of a supervision, as one pure function: step(state, input, facts) → { state, effects }.
// It touches nothing: the shell (shell/tables.ts) carries out the effects and brings back what happened.

export { initialState } from './state.js';
export type { Effect, Facts, Input, MachineConfig, Phase, Route, State, TimerName } from './state.js';

/** The one place state changes. A reload signal that waited is taken once what it waited for is over. */
export function step(state: State, input: Input, facts: Facts): { state: State; effects: Effect[] } {
  const effects: Effect[] = [];
  if (state.phase === 'done') return { state, effects };
  return { state: settleReload(decide(state, input, facts, effects), facts, effects), effects };
}

function decide(state: State, input: Input, facts: Facts, out: Out): State {
  switch (input.kind) {
    case 'start':
      return state.phase === 'starting' ? start(state, input.stopFirst, facts, out) : state;
    case 'stop-signal':
      return stopSignal(state, input.signal, input.reason, facts, out);
    case 'command-exit':
      if (retiringOf(state.tally)?.run.id === input.run) state = retireExit(state, input.exit, out);
      else {
        state = warnUntaken(state, input, facts, out);
        state = besideExit(state, input, facts, out) ?? commandExit(state, input, facts, out);
      }
      return input.treeGone ? retireWithTree(state, out) : state;
    case 'reaped':
      return reaped(state, input.exits, facts);
    case 'child-gone':
      state = childGone(retireChildGone(state, out), input.treeGone, facts, out);
      return input.treeGone ? retireWithTree(state, out) : state;
    case 'looked':
      state = drainGone(heldLooked(state, input.snapshot, out), input.snapshot, facts, out);
      return looked(retireLooked(state, input, facts, out), input, facts, out);
    case 'round-sent':
      return roundSent(state, input.run, input.groups, out);
    case 'reload':
      return reloadSignal(state, input.reason, facts, out);
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
    case 'socket-taken':
      return nextListened(heard(state, input, facts, out), input, facts, out);
    case 'socket-closed':
      return heard(state, input, facts, out);
    case 'report-closed':
      return drainGone(heard(state, input, facts, out), input, facts, out);
    case 'conns':
      return connsHeard(state, input, facts, out);
    case 'takers-sampled':
      if (input.why === 'next-ready') return nextSampled(state, input.run, facts, out);
      return untakenSampled(state, input.run, facts, out);
    case 'sockets-checked':
      return socketsChecked(state, input.run, input.lost, facts, out);
  }
}

function start(state: In<'starting'>, stopFirst: SignalName | undefined, facts: Facts, out: Out): State {
  // The held sockets were bound and checked just now: the first run needs no check.
  if (!stopFirst) return spawn(openAtStart(state.tally, facts), facts, out);
  log(out, 'notice', 'stop', `${stopFirst} received before the command started: not starting it`, {
    signal: stopFirst,
  });
  return done(state.tally, { code: null, signal: stopFirst }, 128 + facts.signalNumber(stopFirst), out);
}

// The tree, children, timers, health.

/**
 * Exits gsup reaped. Staying for daemons (`auto`), the last one's status
 * becomes gsup's; since a stop began, they say what ran behind the command.
 */
function reaped(state: State, exits: readonly CommandExit[], facts: Facts): State {
  if (exits.length === 0) return state;
  let { tally } = state;
  if (tally.stayed) tally = { ...tally, daemonExit: exits[exits.length - 1] };
  if (tally.behind) tally = { ...tally, behind: sumBehind(tally.behind, exits, facts) };
  return tally === state.tally ? state : { ...state, tally };
}

function looked(state: State, input: Extract<Input, { kind: 'looked' }>, facts: Facts, out: Out): State {
  const { snapshot: look } = input;
  const gone = look.alive.length === 0;
  switch (state.phase) {
    case 'exited':
      return afterExit(state, look.alive, input.commandPgid, facts, out);
    case 'stop-delay':
      // A stop delay ends too when the tree goes away by itself: nothing is left to wait for.
      if (gone) return endStop(state, facts, out);
      out.push({ kind: 'count-seen', snapshot: look });
      return state;
    case 'stopping':
      // 3. Each look while stopping: the stop signal to every root not reached yet, until nothing is left.
      return gone ? endStop(state, facts, out) : stopRoundOn(state, input, out);
    case 'killing':
      if (gone) return endStop(state, facts, out);
      if (facts.now - state.killStartedAt > MAX_KILL_MS) {
        out.push({ kind: 'give-up-killing', run: undefined, alive: look.alive });
        return endStop(state, facts, out);
      }
      out.push({ kind: 'kill-round', run: undefined, snapshot: look }, { kind: 'look', delayMs: 1 });
      return state;
    case 'daemons':
      if (gone) return finish(ending(state), out);
      out.push({ kind: 'look', delayMs: DAEMON_POLL_MS });
      return state;
    default:
      return state;
  }
}

/** A stop round on the route the shell planned: the ledger says who has had the stop signal; none gets it twice. */
function stopRoundOn(state: In<'stopping'>, input: Extract<Input, { kind: 'looked' }>, out: Out): State {
  const { stop } = state;
  const { snapshot: look, route } = input;
  if (route) {
    const round = { run: undefined, ledger: stop.ledger, signal: stop.signal, again: stop.again };
    const ledger = sendRound(round, look, route, state.exit !== undefined, out);
    state = { ...state, stop: { ...stop, ledger, again: undefined } };
  }
  out.push({ kind: 'look', delayMs: STOP_POLL_MS });
  return state;
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
      // The final stop: whatever still holds a held socket stops listening now.
      if (killing.phase !== 'killing' || killing.stop.then !== 'exit') return killing;
      return { ...killing, tally: shutOpen(killing.tally, 'the kill timeout', out) };
    }
    case 'restart-delay':
      if (state.phase !== 'restarting') return state;
      // Held sockets: each still listening on its address (any holder can shutdown() one) before the next run.
      if (state.tally.open) {
        out.push({ kind: 'check-sockets', run: state.tally.runs + 1 });
        return state;
      }
      return spawn(state.tally, facts, out);
    case 'finish':
      return state.phase === 'ending' ? finish(state, out) : state;
    case 'health':
      // Time for a round of probes while the command (or what it handed over) runs; deciding what next: ask
      // again later.
      if (state.phase === 'exited' && facts.config.probes) out.push({ kind: 'schedule-probe' });
      if (state.phase === 'running' || state.phase === 'daemons') out.push({ kind: 'probe', run: state.run.id });
      return state;
    case 'ready-timeout':
      return readyTimedOut(warnUntaken(state, { kind: 'timer', name }, facts, out), facts, out);
    case 'next-ready-timeout':
      return nextTimedOut(state, facts, out);
    case 'retire-kill-timeout':
      return retireKillTimeout(state, facts, out);
    case 'drain-limit':
      return drainLimit(state, facts, out);
    case 'untaken':
      return untakenDue(state, facts, out);
    case 'check':
      return state; // the shell's own watch for a lost SIGCHLD
  }
}

/** The held sockets checked before run N: it starts, or (a port taken meanwhile) restarts are given up. */
function socketsChecked(state: State, run: number, lost: readonly string[], facts: Facts, out: Out): State {
  if (state.phase !== 'restarting' || run !== state.tally.runs + 1) return state;
  if (lost.length === 0) return spawn(state.tally, facts, out);
  const message = `restarts given up: the held socket(s) ${lost.join(', ')} cannot be bound again (the port is taken)`;
  log(out, 'warn', 'restart-give-up', message, { names: lost });
  return finish(ending(state), out);
}

function health(state: State, run: number, unhealthy: boolean, facts: Facts, out: Out): State {
  // While two runs live the held socket answers for both: probes count for neither (the shell drops them too).
  if (!runOn(state) || run !== state.run.id || !probesCount(state)) return state;
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
