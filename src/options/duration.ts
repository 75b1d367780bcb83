import { MAX_DURATION_MS, readDuration } from '../engine/config/duration.js';
import { quoted, UsageError } from './errors.js';

/**
 * `500ms`, `10s`, `2m`, `1h`, `1m30s`, `1.5s` or `0` → milliseconds (at most
 * 2^31-1, about 24.8 days). A bare number is refused with both readings: a
 * `GSUP_GRACE=30` beside `terminationGracePeriodSeconds: 30` must not be 30 ms.
 */
export function parseDuration(text: string, what: string): number {
  const read = readDuration(text);
  if ('ms' in read) return read.ms;
  const bad = `invalid duration ${quoted(text)} for ${what}`;
  if (read.problem === 'no-unit') {
    const number = text.trim();
    // 1.1 × 1000 is 1100.0000000000002 in floating point: twelve digits say it.
    const ms = Number((Number(number) * 1000).toPrecision(12));
    throw new UsageError(`${bad}: a number needs a unit: ${number}s or ${ms}ms`);
  }
  if (read.problem === 'too-long') throw new UsageError(`${bad}: at most ${MAX_DURATION_MS} ms (about 24.8 days)`);
  throw new UsageError(`${bad}: use e.g. 500ms, 10s, 1m30s or 1h`);
}
