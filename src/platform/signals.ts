import { constants } from 'node:os';
import type { SignalName } from './types.js';

// Signal tables shared by the engine and the option parser (neither imports the other).

const byNumber = new Map<number, SignalName>();
for (const [name, number] of Object.entries(constants.signals) as Array<[SignalName, number]>) {
  // Aliases (SIGIOT = SIGABRT, SIGPOLL = SIGIO): the first, canonical name wins.
  if (!byNumber.has(number)) byNumber.set(number, name);
}

export function signalNumber(name: SignalName): number {
  return constants.signals[name];
}

export function signalName(number: number): SignalName | undefined {
  return byNumber.get(number);
}

/** Signals no process can catch, and SIGCHLD, which is about gsup's own children. */
export const NOT_FORWARDED: ReadonlySet<SignalName> = new Set(['SIGKILL', 'SIGSTOP', 'SIGCHLD']);

/** Every catchable signal 1–31 that gsup listens for and forwards. */
export function forwardableSignals(): SignalName[] {
  const result: SignalName[] = [];
  for (let number = 1; number <= 31; number++) {
    const name = byNumber.get(number);
    if (name && !NOT_FORWARDED.has(name)) result.push(name);
  }
  return result;
}

export const STOP_SIGNALS: ReadonlySet<SignalName> = new Set(['SIGTERM', 'SIGINT']);
export const JOB_CONTROL_SIGNALS: ReadonlySet<SignalName> = new Set(['SIGTSTP', 'SIGTTIN', 'SIGTTOU']);
