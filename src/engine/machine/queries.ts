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
