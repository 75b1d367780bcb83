import type { GroupLeaver, SignalName } from '../../platform/types.js';
import type { CommandExit } from './values.js';

// How the engine's log lines say things.

export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;
}

export function describeExit(exit: CommandExit): string {
  if (exit.signal) return `signal ${exit.signal}`;
  return exit.signo === undefined ? `code ${exit.code}` : `signal ${exit.signo}`;
}

/** How a command ended: `died of signal SIGTERM`, `died of signal 40`, `exited with code 3`. */
export function describeEnd(exit: CommandExit): string {
  return `${deathSignal(exit) ? 'died of' : 'exited with'} ${describeExit(exit)}`;
}

/** The signal a command died of (`SIGTERM`; `signal 36`, a real-time one, which has no name here), or undefined. */
export function deathSignal(exit: CommandExit): string | undefined {
  return exit.signal ?? (exit.signo === undefined ? undefined : `signal ${exit.signo}`);
}

/** A run that could not be started: what failed (gsup's own preparation), or the spawn's error code. */
export function describeStartFailure(exit: CommandExit): string {
  return `could not be started (${exit.error ?? exit.errorCode})`;
}

/** A forwarded signal as it came: `SIGUSR1 (as SIGUSR2)` when a rule rewrote it. */
export function describeSignal(signal: SignalName, received: SignalName | undefined): string {
  return received && received !== signal ? `${received} (as ${signal})` : signal;
}

/** What a pm2 manager, sent a signal alone, does with it (pm2's own handlers): only a stop reaches its apps. */
export function describePm2Effect(signal: SignalName, pm2Kill: boolean, apps: string[]): string {
  const stops = pm2Kill || signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGQUIT';
  if (stops) return apps.length > 0 ? `, which stops ${apps.join(', ')}` : '';
  const reopens = signal === 'SIGUSR2' ? ", which reopens pm2's logs" : '';
  return `${reopens}${apps.length > 0 ? '; its apps are not signalled' : ''}`;
}

/** A member found outside its group right after the group's send, as -v says it (see leaverHad, continuity.ts). */
export function describeLeaver(leaver: GroupLeaver, signal: SignalName, missed: boolean): string {
  const { info, pgid } = leaver;
  const left = `pid ${info.pid} left group ${info.pgid} for group ${pgid}`;
  if (missed) return `${left} before ${signal} went to ${info.pgid} (not pending, no handler: it would have ended it)`;
  const unsure = 'not pending; a handler or a mask: it may have had it';
  return `${left} around ${signal}'s send to ${info.pgid} (${unsure}): counted as reached`;
}
