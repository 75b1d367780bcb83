import type { SignalName } from '../../platform/types.js';
import type { State } from './state.js';

// What the shell may ask of the state, as derived values: no file outside machine/ reads the phase.

/** The supervision is over: gsup's exit has been decided. */
export function over(state: State): boolean {
  return state.phase === 'done';
}

/** The stop signal the next look's stop round sends, if one is due: the shell plans its route on that look. */
export function stopRoundSignal(state: State): SignalName | undefined {
  return state.phase === 'stopping' ? state.stop.signal : undefined;
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
