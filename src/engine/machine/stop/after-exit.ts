import type { ProcessInfo, SignalName } from '../../../platform/types.js';
import { exitStatus } from '../outcomes/exit-status.js';
import { describeExit } from '../format.js';
import { onExitAction } from './on-exit.js';
import { ending, enterRestart, finish, log, planOf, startFailed } from '../outcomes/outcomes.js';
import { decideRestart } from '../outcomes/restart.js';
import type { Facts, In, Input, Out, State } from '../state.js';
import { beginStop, endStop, newStop } from './stop-sequence.js';

// The command's exit, restarts, daemons: what its exit, and the children it leaves, decide.

// Looks while gsup stays for daemons the command left; SIGCHLD wakes it for its own children.
export const DAEMON_POLL_MS = 1000;

export function commandExit(
  state: State,
  input: Extract<Input, { kind: 'command-exit' }>,
  facts: Facts,
  out: Out,
): State {
  if (state.phase === 'starting' || state.phase === 'done' || input.run !== state.run.id) return state;
  const { exit } = input;
  if (exit.errorCode !== undefined) {
    if (state.phase === 'running') return startFailed(state, exit, facts, out);
    return finish({ phase: 'ending', tally: state.tally, run: state.run, exit }, out);
  }
  const { behind } = state.tally;
  const tally = behind ? { ...state.tally, behind: { ...behind, wrapper: input.wrapper } } : state.tally;
  if (state.phase === 'ending') return finish({ ...state, tally, exit }, out);
  const stopping = state.phase === 'stop-delay' || state.phase === 'stopping' || state.phase === 'killing';
  if (stopping) return childGone({ ...state, tally, exit }, input.treeGone, facts, out);
  if (state.phase !== 'running') return childGone(state, input.treeGone, facts, out);
  const decision = decideRestart(state.tally.restarts, facts.config, exit, facts.now - state.run.startedAt, input.sent);
  const restart = planOf(decision.decision, facts);
  if (!restart && decision.decision.reason) log(out, 'warn', 'restart-give-up', `command ${decision.decision.reason}`);
  else if (!restart && exit.signal && input.sent.has(exit.signal)) forwardedDeath(exit.signal, facts, out);
  const exited: In<'exited'> = {
    phase: 'exited',
    tally: { ...state.tally, restarts: decision.state },
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

/**
 * The command died of a signal gsup forwarded (no stop's: a stop was not under way), and no restart follows: said
 * at the default level, since nothing else would say why the app ended, with the flag that makes it a reload.
 */
function forwardedDeath(signal: SignalName, facts: Facts, out: Out): void {
  const { restart, waitReady, listen } = facts.config;
  const { signal: reloadSignal, candidates: reloadable } = facts.config.reload;
  const policy =
    restart === 'never' ? '--restart never' : `--restart ${restart}: a signal gsup forwarded is no failure`;
  let hint = '';
  if (reloadSignal) hint = `; the reload signal is ${reloadSignal}`;
  else if (reloadable.has(signal)) {
    const needs = waitReady || listen ? '' : ' (with --listen or --wait-ready)';
    hint = `; --reload-signal ${signal}${needs} would make it a reload`;
  }
  log(
    out,
    'warn',
    'forwarded-death',
    `command died of ${signal}, which gsup forwarded: not restarted (${policy})${hint}`,
    {
      signal,
      restart,
      ...(reloadSignal ? { reloadSignal } : reloadable.has(signal) && { reloadable: true }),
    },
  );
}

/** What the command left: stop it before a restart, or as `--on-exit` says (stop, stay, or exit). */
export function afterExit(
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
    tally: { ...state.tally, stayed: facts.config.onExit === 'auto' },
    run: state.run,
    exit,
  };
}

/** A child of gsup is gone: end the wait of a stop or for daemons if that was the last, else look sooner. */
export function childGone(state: State, treeGone: boolean, facts: Facts, out: Out): State {
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
