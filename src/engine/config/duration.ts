// Durations as people write them: the CLI's flags and variables and the
// library's options read them alike ('500ms', '10s', '1m30s', '1h', '1.5s').

const UNITS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
type Unit = keyof typeof UNITS;
const ORDER: readonly Unit[] = ['h', 'm', 's', 'ms'];

/** What a timer can hold: Node turns anything longer into 1 ms (with a warning). */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** Why a text is no duration: a number with no unit (seconds or milliseconds?), bad syntax, or over a timer's limit. */
export type DurationProblem = 'no-unit' | 'syntax' | 'too-long';

/**
 * `500ms`, `10s`, `2m`, `1h`, `1m30s`, `1.5s` or `0` → milliseconds. Parts
 * go from the largest unit down, each once. A bare number other than 0 is
 * refused: Docker and Kubernetes count seconds, pm2 milliseconds.
 */
export function readDuration(text: string): { ms: number } | { problem: DurationProblem } {
  const trimmed = text.trim();
  if (/^0+(\.0+)?$/.test(trimmed)) return { ms: 0 };
  if (/^\d+(\.\d+)?$/.test(trimmed)) return { problem: 'no-unit' };
  const part = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;
  let total = 0;
  let next = 0; // the first unit the next part may have
  while (part.lastIndex < trimmed.length) {
    const match = part.exec(trimmed);
    const unit = match?.[2] as Unit | undefined;
    if (!match || !unit || ORDER.indexOf(unit) < next) return { problem: 'syntax' };
    next = ORDER.indexOf(unit) + 1;
    total += Number(match[1]) * UNITS[unit];
  }
  if (trimmed === '') return { problem: 'syntax' };
  const ms = Math.round(total);
  return ms > MAX_DURATION_MS ? { problem: 'too-long' } : { ms };
}
