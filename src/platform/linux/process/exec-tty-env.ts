/** Where the app's NODE_OPTIONS wait while gsup's exec helper (a node) runs: the helper must not load them. */
export const NODE_OPTIONS_PASSED = 'GSUP_EXEC_NODE_OPTIONS';

/**
 * What gsup's exec helper does before its exec, `,`-separated: `session` (setsid -c: the terminal
 * handed over), `listen-pid` (LISTEN_PID set to its own pid, which the command keeps). Unset: `session`.
 */
export const EXEC_STEPS = 'GSUP_EXEC_STEPS';

/** How many fds from 3 up the command must get through the helper (held sockets, report channel, IPC). */
export const EXEC_KEEP = 'GSUP_EXEC_KEEP';

/** NODE_CHANNEL_FD for the command: the helper's own node took the variable at its start. */
export const EXEC_CHANNEL = 'GSUP_EXEC_CHANNEL';
