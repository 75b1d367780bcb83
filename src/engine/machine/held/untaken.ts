import { formatDuration } from '../format.js';
import { NOTHING, withRun } from './held.js';
import { runOn } from '../queries.js';
import type { Facts, Input, Out, Run, State } from '../state.js';

// The warnings for held sockets a run did not take (--listen): connections to them wait in the kernel's queue
// with nobody to accept them, silently. Once per run: UNTAKEN_MS after its start (the kernel asked once more
// first), at its ready timeout, or at its end.

/** How long a run may leave a held socket untaken before it is warned of (a slow start takes a few seconds). */
export const UNTAKEN_MS = 10_000;

/** A run starts, or becomes the current one: its check comes when it is UNTAKEN_MS old. */
export function watchTakes(run: Run, facts: Facts, out: Out): void {
  if (!facts.config.listen?.names.length) return;
  out.push({ kind: 'set-timer', name: 'untaken', ms: Math.max(0, run.startedAt + UNTAKEN_MS - facts.now) });
}

/** The held sockets still open that no process of this run took. */
function untakenBy(state: State, run: Run): string[] {
  const took = run.held?.took ?? [];
  return (state.tally.open ?? []).filter((name) => !took.includes(name));
}

/** The check is due: the kernel is asked once more who of the run listens (one that says nothing), then it decides. */
export function untakenDue(state: State, facts: Facts, out: Out): State {
  // Its command gone (daemons left behind), the kernel has no tree of it to show: its end had its own warning.
  if (!runOn(state) || state.phase !== 'running' || state.run.held?.warned) return state;
  const { run } = state;
  // A reload handed over to a younger run meanwhile: its own check, when it is due.
  if (facts.now - run.startedAt < UNTAKEN_MS) return (watchTakes(run, facts, out), state);
  if (untakenBy(state, run).length > 0) out.push({ kind: 'sample-takers', run: run.id, why: 'untaken' });
  return state;
}

/** What the kernel showed is in: one warning naming what the run has not taken, if anything. */
export function untakenSampled(state: State, id: number, facts: Facts, out: Out): State {
  if (!runOn(state) || state.run.id !== id || state.run.held?.warned) return state;
  const { run } = state;
  const untaken = untakenBy(state, run);
  if (untaken.length === 0) return state;
  const took = run.held?.took ?? [];
  const after = `${formatDuration(facts.now - run.startedAt)} after its start`;
  const message =
    took.length === 0
      ? `run ${run.id} has taken no held socket (${untaken.join(', ')}) ${after}: connections wait in the queue ` +
        `unanswered; ${likelyCauses(facts)}`
      : `run ${run.id} has not taken the held socket(s) ${untaken.join(', ')} ${after} (it took ${took.join(', ')}): ` +
        'connections to them wait in the queue unanswered; the app listens on another port or address';
  out.push({ kind: 'log', level: 'warn', event: 'listen-untaken', message, fields: { run: run.id, names: untaken } });
  return withRun(state, run.id, { ...(run.held ?? NOTHING), warned: true });
}

/** Why a run takes no held socket, most likely. */
function likelyCauses(facts: Facts): string {
  return facts.config.listen?.preload
    ? "the app listens on another port or address (left to it), gsup's preload did not load (a script reset " +
        "NODE_OPTIONS), or the server is no Node's (a native one, Bun)"
    : 'the app does not use LISTEN_FDS (fds 3…), and --no-listen-preload leaves NODE_OPTIONS alone';
}

/**
 * A run that ends by itself (or of failed health checks), or reaches its ready timeout, having taken no held
 * socket: one warning with the likely causes. Not for a stop gsup was asked for.
 */
export function warnUntaken(state: State, input: Input, facts: Facts, out: Out): State {
  const listen = facts.config.listen;
  if (!listen || !('run' in state)) return state;
  const { run } = state;
  const held = run.held ?? NOTHING;
  if (held.took.length > 0 || held.warned) return state;
  let when: string;
  if (input.kind === 'command-exit') {
    if (input.run !== run.id || input.exit.errorCode !== undefined) return state;
    const stopped = 'stop' in state && state.stop.cause !== 'unhealthy';
    if (stopped || (state.phase !== 'running' && !('stop' in state))) return state;
    when = 'ended';
  } else {
    if ((state.phase !== 'running' && state.phase !== 'daemons') || run.app !== 'waiting') return state;
    when = 'reached its ready timeout';
  }
  const likely = likelyCauses(facts);
  const names = listen.names.join(', ');
  const message = `run ${run.id} ${when} without any process taking a held socket (${names}): ${likely}`;
  out.push({ kind: 'log', level: 'warn', event: 'listen-untaken', message, fields: { run: run.id } });
  return withRun(state, run.id, { ...held, warned: true });
}
