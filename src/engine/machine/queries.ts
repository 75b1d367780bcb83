import type { In, State } from './state.js';

// What the shell may ask of the state, as derived values: no file outside machine/ reads the phase. (The one the
// signal path asks, the stop signal of the next look's round, is the stop sequence's: stopRoundSignal.)

/** A run is on: the command runs, or gsup supervises the daemons it handed over to. */
export function runOn(state: State): state is In<'running' | 'daemons'> {
  return state.phase === 'running' || state.phase === 'daemons';
}

/** Once a stop's summary is out (or between runs), it has said who left: no tree lines then (-v). */
export function treeQuiet(state: State): boolean {
  return state.phase === 'ending' || state.phase === 'done' || state.phase === 'restarting';
}

/** The command exited and the next look decides what it left: pm2 God daemons it started are looked for then. */
export function leftoversAwaited(state: State): boolean {
  return state.phase === 'exited';
}

/** Between runs (the restart delay): no command whose lost SIGCHLD to look for. */
export function betweenRuns(state: State): boolean {
  return state.phase === 'restarting';
}

/** gsup's end waits for the command's exit to be reported: the lost-SIGCHLD check goes on. */
export function endAwaitsExit(state: State): boolean {
  return state.phase === 'ending';
}

/** While two runs live (a reload), a health probe answers for neither: its result counts for nothing. */
export function probesCount(state: State): boolean {
  return state.tally.beside === undefined;
}

/**
 * What will end the run beside the current one (a reload's), if one is: the next run's ready timeout (then the
 * kernel's last answer on who of it listens, which the shell always gives); a draining run's drain limit; a retiring
 * run's kill timeout (before SIGKILL); the looks that follow SIGKILL (any look ends it once SIGKILL has had
 * MAX_KILL_MS); its command's exit (its part of the tree is gone); or the stop of the whole tree under way (a run it
 * cut short: the stop's end ends it). `stuck`: none of these, which the machine never leaves a run in
 * (test/unit/machine/beside.test.ts walks it, and checks that the timer or look named is due).
 */
export type BesideEnd =
  'next-ready-timeout' | 'last-sample' | 'drain-limit' | 'retire-kill-timeout' | 'looks' | 'exit' | 'stop' | 'stuck';

export function besideEnds(state: State): BesideEnd | undefined {
  const beside = state.tally.beside;
  if (!beside || state.phase === 'done') return undefined;
  if (beside.role === 'next') {
    if (state.phase !== 'running') return 'stuck';
    return beside.lastSample ? 'last-sample' : 'next-ready-timeout';
  }
  if (beside.gone) return beside.exit ? 'stuck' : 'exit';
  if (beside.cause === 'cut') {
    const stopping = state.phase === 'stop-delay' || state.phase === 'stopping' || state.phase === 'killing';
    return stopping || state.phase === 'ending' ? 'stop' : 'stuck';
  }
  if (beside.draining) return 'drain-limit';
  return beside.killedAt === undefined ? 'retire-kill-timeout' : 'looks';
}
