import type { SignalName } from '../../../platform/types.js';
import type { GroupSent } from '../ledger/continuity.js';
import { formatDuration } from '../format.js';
import { EMPTY_LEDGER, roundSent as ledgerSent } from '../ledger/ledger.js';
import { afterUnhealthy, enterRestart, ending, finish, log, sayLeavers, watchBehind } from '../outcomes/outcomes.js';
import { foldNext } from '../runs/reload.js';
import { tell } from '../runs/drain.js';
import { endDrain, retireSent, retireWithTree, takeOverRetiring } from '../runs/retire.js';
import type { Facts, In, Out, RestartPlan, State, Stop, StopCause } from '../state.js';

// The stop sequence's decisions: stop signals one, two and three, the stop
// delay, the kill timeout, and what follows the stop.

/** A stop gsup began itself counts from zero: the first stop signal received then only joins it. */
export function newStop(signal: SignalName, then: Stop['then'], cause: StopCause, plan?: RestartPlan): Stop {
  return { signal, then, cause, received: cause === 'signal' ? 1 : 0, again: undefined, plan, ledger: EMPTY_LEDGER };
}

/**
 * A stop signal received (or a library stop request). The first starts the
 * stop; the second ends a stop delay, or is forwarded like the first (apps
 * that force their own exit on a second signal get it); the third kills.
 */
export function stopSignal(state: State, signal: SignalName, reason: string, facts: Facts, out: Out): State {
  if (signal === 'SIGKILL') return killSignal(state, reason, facts, out);
  switch (state.phase) {
    case 'running':
    case 'exited':
    case 'daemons':
      return beginStop(
        state,
        newStop(signal, 'exit', 'signal'),
        reason,
        signal === 'SIGTERM' ? facts.config.stopDelay : 0,
        facts,
        out,
      );
    case 'restarting':
      log(out, 'notice', 'restart-cancelled', `${reason}: no restart`);
      return finish(ending(state), out);
    case 'stop-delay':
      log(out, 'notice', 'stop-delay-ended', `${reason}: second stop signal, forwarding ${state.stop.signal} now`, {
        signal,
      });
      return sendStop({ ...state, stop: { ...state.stop, received: state.stop.received + 1 } }, facts, out);
    case 'stopping':
      return stopSignalAgain(state, signal, reason, facts, out);
    default:
      return state; // starting: held until the spawn; killing, ending: nothing more to do
  }
}

/** A stop signal a rule made SIGKILL (`-r TERM:KILL`): the tree is killed now, as by a third stop signal. */
function killSignal(state: State, reason: string, facts: Facts, out: Out): State {
  switch (state.phase) {
    case 'running':
    case 'exited':
    case 'daemons': {
      out.push({ kind: 'begin-stop' }, { kind: 'pause-health' });
      log(out, 'notice', 'stop', `${reason}: killing the tree (rewritten to SIGKILL)`, { signal: 'SIGKILL', reason });
      const exit = state.phase === 'running' ? undefined : state.exit;
      // A look first: the summary names what the SIGKILL rounds of each look then kill.
      out.push({ kind: 'look', delayMs: 0 });
      const stop = newStop('SIGKILL', 'exit', 'signal');
      const tally = endDrain(foldNext(state.tally, facts, out), facts, out);
      return { phase: 'killing', tally, run: state.run, exit, stop, killStartedAt: facts.now };
    }
    case 'stop-delay':
    case 'stopping': {
      log(out, 'notice', 'kill-now', `${reason}: rewritten to SIGKILL, killing the tree now`, { signal: 'SIGKILL' });
      const stop = { ...state.stop, then: 'exit' as const, plan: undefined, received: state.stop.received + 1 };
      return beginKilling({ ...state, phase: 'stopping', stop }, facts, out);
    }
    default:
      return stopSignal(state, 'SIGTERM', reason, facts, out); // restarting: no restart; the rest: nothing more to do
  }
}

function stopSignalAgain(state: In<'stopping'>, signal: SignalName, reason: string, facts: Facts, out: Out): State {
  let stop: Stop = { ...state.stop, received: state.stop.received + 1 };
  if (stop.then === 'restart') {
    // The leftovers of the last run are being stopped: stop them, but start nothing after.
    stop = { ...stop, then: 'exit', plan: undefined };
    log(out, 'notice', 'restart-cancelled', `${reason}: no restart`);
  }
  if (stop.received >= 3) {
    const killing = beginKilling({ ...state, stop }, facts, out); // the SIGKILL first, then the line that says so
    log(out, 'notice', 'kill-now', `${reason}: third stop signal, killing the tree now`, { signal });
    return killing;
  }
  if (stop.received === 1) return { ...state, stop }; // joins the stop gsup began itself
  log(out, 'notice', 'stop-again', `${reason}: second stop signal, forwarding it too (a third kills)`, { signal });
  out.push({ kind: 'look', delayMs: 0 });
  return { ...state, stop: { ...stop, again: signal } };
}

/** 1. The stop delay (if any), then the stop signal: one line says both, in that order. */
export function beginStop(
  state: In<'running' | 'exited' | 'daemons'>,
  stop: Stop,
  reason: string,
  delayMs: number,
  facts: Facts,
  out: Out,
): State {
  const { killTimeout } = facts.config;
  out.push({ kind: 'begin-stop' }, { kind: 'pause-health' });
  const { signal } = stop;
  const waiting = `waiting ${formatDuration(delayMs)} before forwarding ${signal} to the tree`;
  const plan = delayMs > 0 ? waiting : `stopping the tree with ${signal}`;
  log(out, 'notice', 'stop', `${reason}: ${plan} (kill timeout ${formatDuration(killTimeout)})`, {
    signal: stop.signal,
    reason,
    killTimeoutMs: killTimeout,
    stopDelayMs: delayMs,
  });
  const exit = state.phase === 'running' ? undefined : state.exit;
  // A reload's next run not ready yet is stopped with the rest: one stop of the whole tree. An old run that drains
  // has its stop signal now (the stop's rounds reach it).
  const tally = endDrain(foldNext(watchBehind(state.tally, signal), facts, out), facts, out);
  if (delayMs <= 0) return sendStop({ phase: 'stopping', tally, run: state.run, exit, stop }, facts, out);
  // A look now: who was there when the stop began (counted in the summary, if the tree ends the delay by itself).
  out.push({ kind: 'set-timer', name: 'stop-delay', ms: delayMs }, { kind: 'look', delayMs: 0 });
  // The delay lets a load balancer drain: the preload answers with `Connection: close` meanwhile.
  const run = (state.phase === 'running' && tell(state.run, 'closing', facts, out)) || state.run;
  return { phase: 'stop-delay', tally, run, exit, stop };
}

/** 3. While stopping, each look is a round of the stop signal (see stopRound, ledger.ts): the shell plans its route. */
export function stopRoundSignal(state: State): SignalName | undefined {
  return state.phase === 'stopping' ? state.stop.signal : undefined;
}

/**
 * 2. What a round's delivery sent as whole groups, and when: the ledger keeps it (who was in such a group then has
 * had the stop signal). Comes right after the round, before any other look.
 */
export function roundSent(state: State, run: number | undefined, groups: readonly GroupSent[], out: Out): State {
  if (run !== undefined) return retireSent(state, run, groups, out);
  if (state.phase !== 'stopping' && state.phase !== 'killing') return state;
  const { ledger, leavers } = ledgerSent(state.stop.ledger, groups, state.stop.signal);
  sayLeavers(leavers, state.stop.signal, out);
  return { ...state, stop: { ...state.stop, ledger } };
}

/**
 * 2. The kill timeout starts; the stop signal goes out on a fresh look at the tree (a run being retired has had it:
 * its ledger joins the stop's).
 */
export function sendStop(state: In<'stop-delay' | 'stopping'>, facts: Facts, out: Out): State {
  out.push(
    { kind: 'clear-timer', name: 'stop-delay' },
    { kind: 'set-timer', name: 'kill-timeout', ms: facts.config.killTimeout },
    { kind: 'look', delayMs: 0 },
  );
  return { ...state, phase: 'stopping', stop: takeOverRetiring(state.stop, state.tally) };
}

/** 4. At the kill timeout (or a third stop signal): SIGKILL everything, again and again until nothing is left. */
export function beginKilling(state: In<'stopping'>, facts: Facts, out: Out): State {
  out.push(
    { kind: 'clear-timer', name: 'kill-timeout' },
    { kind: 'kill-command-group', run: state.run.id },
    { kind: 'look', delayMs: 0 },
  );
  return { ...state, phase: 'killing', killStartedAt: facts.now };
}

/** 5. One summary line; then gsup's exit, or the next run. */
export function endStop(state: In<'stop-delay' | 'stopping' | 'killing'>, facts: Facts, out: Out): State {
  out.push(
    { kind: 'clear-timer', name: 'stop-delay' },
    { kind: 'clear-timer', name: 'kill-timeout' },
    { kind: 'end-stop' },
  );
  // The tree is gone (or given up on): a run retiring beside, or cut short, with it.
  state = retireWithTree(state, out);
  const { stop, exit } = state;
  if (stop.cause === 'unhealthy' || stop.cause === 'not-ready') {
    return afterUnhealthy(ending(state), stop.then === 'restart', stop.cause, facts, out);
  }
  if (stop.then === 'restart' && stop.plan && exit) return enterRestart({ ...state, exit }, stop.plan, out);
  return finish(ending(state), out);
}
