import { constants } from 'node:os';
import type { SignalName } from '../platform/types.js';
import { NOT_FORWARDED, signalName, signalNumber } from '../platform/signals.js';
import { quoted, UsageError } from './errors.js';

/** `TERM`, `SIGTERM`, `term` or `15` → `SIGTERM`; `0` → null when allowed (drop). */
export function parseSignal(text: string, what: string, allowZero = false): SignalName | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const number = Number(trimmed);
    if (number === 0 && allowZero) return null;
    const name = signalName(number);
    if (name && number <= 31) return name;
  } else {
    const upper = trimmed.toUpperCase();
    const name = (upper.startsWith('SIG') ? upper : `SIG${upper}`) as SignalName;
    if (name in constants.signals && signalNumber(name) <= 31) return signalName(signalNumber(name)) ?? name;
  }
  throw new UsageError(`invalid signal ${quoted(text)} in ${what}`);
}

/** A `from:to` rewrite rule; `to` = 0 drops the signal. `what`: where it came from (--rewrite or GSUP_REWRITE). */
export function parseRewrite(text: string, what = '--rewrite'): [SignalName, SignalName | null] {
  const parts = text.split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    throw new UsageError(`invalid rewrite ${quoted(text)} in ${what}: expected FROM:TO, e.g. TERM:INT or 15:2`);
  }
  const from = parseSignal(parts[0], `${what} ${quoted(text)}`);
  if (from === null || NOT_FORWARDED.has(from)) {
    throw new UsageError(`invalid rewrite ${quoted(text)} in ${what}: ${parts[0]} is never received by gsup`);
  }
  return [from, parseSignal(parts[1], `${what} ${quoted(text)}`, true)];
}

/** `-p`: a signal gsup can receive (SIGKILL would end gsup and leave the tree; SIGSTOP, SIGCHLD are no request). */
export function parseDeathSignal(text: string, what: string): SignalName {
  const signal = parseSignal(text, what)!;
  if (!NOT_FORWARDED.has(signal)) return signal;
  const why = `gsup cannot handle ${signal}; e.g. SIGTERM stops the tree`;
  throw new UsageError(`invalid signal ${quoted(text)} for ${what}: ${why}`);
}
