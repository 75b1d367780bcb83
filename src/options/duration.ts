import { UsageError } from './errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** `500ms`, `10s`, `2m`, `1.5s` or a bare number of milliseconds → milliseconds. */
export function parseDuration(text: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) {
    throw new UsageError(`invalid duration "${text}" for ${what}: use e.g. 500ms, 10s, 2m or a number of milliseconds`);
  }
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']);
}
