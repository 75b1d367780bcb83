import { EXIT_INTERNAL } from '../outcomes/exit-status.js';
import { describeExit } from '../format.js';
import { behindWrapper, done, ending, exitCode, finish, log } from '../outcomes/outcomes.js';
import type { Facts, Out, State } from '../state.js';
import { beginKilling, beginStop, newStop, sendStop } from './stop-sequence.js';
import type { CommandExit } from '../values.js';

// The end: the last sweeps for zombies, gsup's exit status, and internal errors.

// At the end, zombies whose threads are still exiting are waited for this often, this many times.
const SWEEP_MS = 5;
const MAX_SWEEPS = 200;

export function swept(state: State, notYet: number, facts: Facts, out: Out): State {
  if (state.phase !== 'ending' || !state.exit) return state;
  if (notYet > 0 && state.tally.sweeps < MAX_SWEEPS) {
    out.push({ kind: 'set-timer', name: 'finish', ms: SWEEP_MS });
    return { ...state, tally: { ...state.tally, sweeps: state.tally.sweeps + 1 } };
  }
  // Having stayed for daemons, the last one's status; behind a wrapper that died of the stop signal, what it
  // ran; else the command's.
  const behind = state.tally.daemonExit ? undefined : behindWrapper(state.tally.behind, state.exit, facts);
  if (behind) {
    const died = `the command died of ${describeExit(state.exit)}, as a wrapper does when it passes the stop on`;
    log(out, 'info', 'status-behind', `${died}; what it ran exited (${describeExit(behind)}): gsup exits with that`, {
      code: behind.code,
      signal: behind.signal,
      signo: behind.signo,
    });
  }
  const exit = state.tally.daemonExit ?? behind ?? state.exit;
  return done(state.tally, exit, exitCode(state.tally, exit, facts), out);
}

/**
 * An internal error: log it, then stop the tree with the normal sequence
 * (never leave it running) and exit 125. An error while stopping kills;
 * one while killing looks again and kills what is left; only errors that
 * keep coming (a fourth) end gsup at once.
 */
export function fault(state: State, message: string, facts: Facts, out: Out): State {
  const tally = { ...state.tally, faults: state.tally.faults + 1 };
  log(out, 'error', 'internal', `internal error: ${message}`);
  const unknown: CommandExit = { code: null, signal: null };
  switch (state.phase) {
    case 'starting':
    case 'done':
      return done(tally, unknown, EXIT_INTERNAL, out);
    case 'running':
    case 'exited':
    case 'daemons':
      return beginStop({ ...state, tally }, newStop('SIGTERM', 'exit', 'gsup'), 'internal error', 0, facts, out);
    case 'restarting':
      return finish(ending({ ...state, tally }), out);
    case 'stop-delay':
      return sendStop({ ...state, tally }, facts, out);
    case 'stopping':
      return beginKilling({ ...state, tally, stop: { ...state.stop, then: 'exit', plan: undefined } }, facts, out);
    case 'killing':
      // Keep killing (the next look SIGKILLs what is left); only errors that repeat end it.
      if (tally.faults > 3) return done(tally, state.exit ?? unknown, EXIT_INTERNAL, out);
      out.push({ kind: 'look', delayMs: 0 });
      return { ...state, tally };
    case 'ending':
      if (tally.faults > 3 || !state.exit) return done(tally, state.exit ?? unknown, EXIT_INTERNAL, out);
      return finish({ ...state, tally }, out);
  }
}
