import { quoted, UsageError } from './errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

// What a timer can hold: Node turns anything longer into 1 ms (with a warning).
const MAX_MS = 2 ** 31 - 1;

/** `500ms`, `10s`, `2m`, `1.5s` or a bare number of milliseconds → milliseconds (at most 2^31-1, about 24.8 days). */
export function parseDuration(text: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) {
    throw new UsageError(`invalid duration ${quoted(text)} for ${what}: use e.g. 500ms, 10s, 2m or a number of milliseconds`);
  }
  const ms = Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']);
  if (ms > MAX_MS) throw new UsageError(`invalid duration ${quoted(text)} for ${what}: at most ${MAX_MS} ms (about 24.8 days)`);
  return ms;
}
