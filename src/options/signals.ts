import { constants } from 'node:os';
import type { SignalName } from '../platform/types.js';
import { UsageError } from './errors.js';

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
const NOT_FORWARDED = new Set<SignalName>(['SIGKILL', 'SIGSTOP', 'SIGCHLD']);

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

/** `TERM`, `SIGTERM`, `term` or `15` → `SIGTERM`; `0` → null when allowed (drop). */
export function parseSignal(text: string, what: string, allowZero = false): SignalName | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const number = Number(trimmed);
    if (number === 0 && allowZero) return null;
    const name = byNumber.get(number);
    if (name && number <= 31) return name;
  } else {
    const upper = trimmed.toUpperCase();
    const name = (upper.startsWith('SIG') ? upper : `SIG${upper}`) as SignalName;
    if (name in constants.signals && signalNumber(name) <= 31) return byNumber.get(signalNumber(name)) ?? name;
  }
  throw new UsageError(`invalid signal "${text}" in ${what}`);
}

/** A `from:to` rewrite rule; `to` = 0 drops the signal. */
export function parseRewrite(text: string): [SignalName, SignalName | null] {
  const parts = text.split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    throw new UsageError(`invalid rewrite "${text}": expected FROM:TO, e.g. TERM:INT or 15:2`);
  }
  const from = parseSignal(parts[0], `--rewrite "${text}"`);
  if (from === null || NOT_FORWARDED.has(from)) {
    throw new UsageError(`invalid rewrite "${text}": ${parts[0]} is never received by gsup`);
  }
  return [from, parseSignal(parts[1], `--rewrite "${text}"`, true)];
}
