import { quoted, UsageError } from './errors.js';

/**
 * A count (`--max-restarts`, `--health-retries`): a whole number up to
 * 2^53−1, checked as a number and not only as digits, so that
 * `99999999999999999999` is refused here, naming the flag or variable, and
 * never reaches the engine's own check (an "internal error").
 */
export function readCount(text: string, what: string): number {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed))
    throw new UsageError(`invalid number ${quoted(text)} for ${what}: expected a whole number`);
  const value = Number(trimmed);
  if (Number.isSafeInteger(value)) return value;
  throw new UsageError(`invalid number ${quoted(text)} for ${what}: at most ${Number.MAX_SAFE_INTEGER}`);
}
