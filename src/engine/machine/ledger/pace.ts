// How often a stop looks at the tree, and how long SIGKILL may take: the stop's and a retiring run's alike.

/** Looks while a stop (or a retiring run) waits for its tree to empty; a SIGCHLD calls one sooner. */
export const STOP_POLL_MS = 20;
/** A process in uninterruptible sleep can outlive SIGKILL; give up saying so. */
export const MAX_KILL_MS = 5000;
