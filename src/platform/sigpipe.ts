// SIGPIPEs gsup raised itself: a write of its own (stderr, a status or
// health socket) met a reader that is gone. The kernel raises SIGPIPE in the
// writer for that; gsup listens for SIGPIPE to forward it, so these must be
// told apart from one sent by someone else. Each failed write is counted
// here as it fails; libuv hands the failure to JS (the pending phase) before
// it reads the signal (the poll phase after), so the count is there first.

let own = 0;

/** A write of gsup's own just failed with EPIPE, and the kernel raised SIGPIPE for it. */
export function raisedOwnSigpipe(): void {
  own++;
}

/** Was a SIGPIPE just received one of gsup's own? (Counts it off.) */
export function takeOwnSigpipe(): boolean {
  if (own === 0) return false;
  own--;
  return true;
}

/** For a socket's `error` event: EPIPE means a SIGPIPE was raised for it. */
export function countEpipe(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') raisedOwnSigpipe();
}
