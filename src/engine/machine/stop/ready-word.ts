import { formatDuration } from '../format.js';
import { log } from '../outcomes/outcomes.js';
import { runOn } from '../queries.js';
import { nextOf, nextReady } from '../runs/reload.js';
import type { Facts, Input, Out, State } from '../state.js';
import { beginStop, newStop } from './stop-sequence.js';

// The app's word of readiness (--wait-ready), as decisions of the pure step:
// what it said, and what no word in time means.

/**
 * The app of a run said it is ready, or stopping. Heard while its run is
 * on (running, or the daemons it handed over to); a word of an older run, or
 * during a stop, changes nothing.
 */
export function appSaid(state: State, input: Extract<Input, { kind: 'app-said' }>, facts: Facts, out: Out): State {
  // A reload's next run: its word makes it the current run (a `stopping` before that says nothing).
  if (nextOf(state.tally)?.run.id === input.run)
    return input.word === 'ready' ? nextReady(state, input.run, input.via, facts, out) : state;
  if (!runOn(state) || input.run !== state.run.id) return state;
  const { run } = state;
  if (run.app !== 'waiting' && !(run.app === 'ready' && input.word === 'stopping')) return state;
  const tookMs = facts.now - run.startedAt;
  if (input.word === 'ready') {
    out.push({ kind: 'clear-timer', name: 'ready-timeout' });
    log(out, 'info', 'app-ready', `the app said it is ready (${input.via}) ${formatDuration(tookMs)} after its start`, {
      via: input.via,
      ms: tookMs,
    });
  } else {
    log(out, 'info', 'app-stopping', `the app said it is stopping (${input.via}): not ready`, { via: input.via });
  }
  return { ...state, run: { ...run, app: input.word } };
}

/** --ready-timeout: no word yet is a failed start, stopped (then restarted or not) as failed health checks are. */
export function readyTimedOut(state: State, facts: Facts, out: Out): State {
  if (!runOn(state) || state.run.app !== 'waiting') return state;
  const timeout = formatDuration(facts.config.readyTimeout ?? facts.now - state.run.startedAt);
  const then = facts.config.restart === 'never' ? 'exit' : 'restart';
  // As for failed health checks: the failure, then the stop's own line.
  const message = `the app did not say it was ready within ${timeout} (--ready-timeout): a failed start`;
  log(out, 'warn', 'ready-timeout', message, { timeoutMs: facts.config.readyTimeout });
  return beginStop(state, newStop('SIGTERM', then, 'not-ready'), 'not ready', 0, facts, out);
}
