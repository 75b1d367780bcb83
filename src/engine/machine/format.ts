import type { SignalName } from '../../platform/types.js';
import type { CommandExit } from './values.js';

// How the engine's log lines say things.

export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;
}

export function describeExit(exit: CommandExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
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
