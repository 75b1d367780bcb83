import type { CommandExit } from './spawn.js';
import type { Target } from './plan.js';

// How the engine's log lines say things.

export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;
}

export function describeExit(exit: CommandExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

export function describeTarget(target: Target): { pgid: number } | { pid: number } {
  return target.kind === 'group' ? { pgid: target.pgid } : { pid: target.process.pid };
}
