/** A mistake in what the user gave gsup: one line on stderr, exit 125. */
export class UsageError extends Error {
  override name = 'UsageError';
}

// A bad value is quoted this far in an error line: enough to recognise it, never a wall of text.
const QUOTED_MAX = 100;

/** `"value"` for an error line, cut after 100 characters (saying how long it was). */
export function quoted(value: string): string {
  if (value.length <= QUOTED_MAX) return `"${value}"`;
  return `"${value.slice(0, QUOTED_MAX)}…" (${value.length} characters)`;
}
