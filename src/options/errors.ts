/** A mistake in what the user gave gsup: one line on stderr, exit 125. */
export class UsageError extends Error {
  override name = 'UsageError';
}
