import type { Facts, HeldInput, Out, Run, RunHeld, State, Tally } from '../state.js';
import type { Snapshot } from '../values.js';

// The held sockets' decisions (--listen): who of a run took which socket, when a socket is done with (shut
// down for every holder, so that clients are refused rather than left waiting), and the warning for a run
// that took none. The sockets themselves, and the words, are the shell's (engine/listen/).

export const NOTHING: RunHeld = { took: [], takers: [], released: false, warned: false };

/** The held sockets, all open, at the start (none without --listen). */
export function openAtStart(tally: Tally, facts: Facts): Tally {
  const names = facts.config.listen?.names;
  return names && names.length > 0 ? { ...tally, open: names } : tally;
}

/** Shuts down what is still open (no run follows, or the kill timeout came): said once, at -v. */
export function shutOpen(tally: Tally, reason: string, out: Out): Tally {
  if (!tally.open || tally.open.length === 0) return tally;
  return shut(tally, tally.open, reason, out);
}

function shut(tally: Tally, names: readonly string[], reason: string, out: Out): Tally {
  // Said by the shell as it shuts them (held.ts): a socket handed to gsup is only closed.
  out.push({ kind: 'shut-sockets', names, reason });
  return { ...tally, open: (tally.open ?? []).filter((name) => !names.includes(name)) };
}

/** The run an input is of, when it is the current one or (a reload) the one beside it. */
export function runOf(state: State, id: number): Run | undefined {
  if ('run' in state && state.run.id === id) return state.run;
  return state.tally.beside?.run.id === id ? state.tally.beside.run : undefined;
}

export function withRun(state: State, id: number, held: RunHeld): State {
  if ('run' in state && state.run.id === id) return { ...state, run: { ...state.run, held } } as State;
  const { beside } = state.tally;
  if (beside?.run.id !== id) return state;
  return { ...state, tally: { ...state.tally, beside: { ...beside, run: { ...beside.run, held } } } };
}

/** The runs that live: the current one, and during a reload the one beside it. */
function runsOf(state: State): Run[] {
  const runs = 'run' in state ? [state.run] : [];
  return state.tally.beside ? [...runs, state.tally.beside.run] : runs;
}

/** A word of a run's report channel (or what the kernel showed of it); then the final stop's rule. */
export function heard(state: State, input: HeldInput, facts: Facts, out: Out): State {
  const run = runOf(state, input.run);
  if (!run || !state.tally.open) return state;
  const held = run.held ?? NOTHING;
  switch (input.kind) {
    case 'socket-taken': {
      if (!facts.config.listen?.names.includes(input.name)) return state;
      const taker = { name: input.name, pid: input.pid, seen: input.seen };
      const known = held.takers.some((t) => t.name === taker.name && t.pid === taker.pid);
      if (!held.took.includes(input.name)) {
        const via = input.seen === 'word' ? 'its word' : 'seen by the kernel';
        const message = `run ${run.id}: pid ${input.pid} took the held socket ${input.name} (${via})`;
        out.push({ kind: 'log', level: 'info', event: 'listen-taken', message, fields: { ...taker, run: run.id } });
      }
      const took = held.took.includes(input.name) ? held.took : [...held.took, input.name];
      return withRun(state, run.id, { ...held, took, takers: known ? held.takers : [...held.takers, taker] });
    }
    case 'socket-closed': {
      const takers = held.takers.filter((t) => !(t.name === input.name && t.pid === input.pid));
      return released(withRun(state, run.id, { ...held, takers }), out);
    }
    case 'report-closed': {
      // Whoever said a word held the channel too: gone. One the kernel showed may live on without it.
      const takers = held.takers.filter((taker) => taker.seen === 'kernel');
      return released(withRun(state, run.id, { ...held, takers, released: true }), out);
    }
    case 'takers-sampled':
    case 'conns':
      return state; // what the kernel showed came first (socket-taken); what it was asked for decides (step.ts)
  }
}

/** A look: takers no longer alive are gone (an exit says no word); then the final stop's rule. */
export function looked(state: State, snapshot: Snapshot, out: Out): State {
  let taken = false;
  for (const { id, held } of runsOf(state)) {
    if (!held || held.takers.length === 0) continue;
    taken = true;
    const takers = held.takers.filter((taker) => snapshot.alive.some((info) => info.pid === taker.pid));
    if (takers.length < held.takers.length) state = withRun(state, id, { ...held, takers });
  }
  return taken ? released(state, out) : state;
}

/**
 * The final stop (no run follows): a socket is shut down once every process that took it has closed it or
 * is gone, and all of them once nothing of the run holds its report channel. A wrapper shell or a stray
 * child may still hold the fd: it stops listening too, and new connections are refused.
 */
function released(state: State, out: Out): State {
  const { open } = state.tally;
  if (!open || open.length === 0 || (state.phase !== 'stopping' && state.phase !== 'killing')) return state;
  if (state.stop.then !== 'exit') return state;
  // Both runs, during a reload: a socket is done with once neither listens on it.
  const helds = runsOf(state).map((run) => run.held ?? NOTHING);
  const all = helds.every((held) => held.released && held.takers.length === 0);
  const took = (name: string) => helds.some((held) => held.took.includes(name));
  const holds = (name: string) => helds.some((held) => held.takers.some((taker) => taker.name === name));
  const done = all ? open : open.filter((name) => took(name) && !holds(name));
  if (done.length === 0) return state;
  const reason = all ? 'nothing of the run holds it' : 'the app closed it, or exited';
  return { ...state, tally: shut(state.tally, done, reason, out) };
}
