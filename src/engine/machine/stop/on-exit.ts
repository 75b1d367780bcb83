import type { Snapshot } from '../values.js';

export type OnExitPolicy = 'auto' | 'stop' | 'wait' | 'exit';
export const ON_EXIT_POLICIES: readonly OnExitPolicy[] = ['auto', 'stop', 'wait', 'exit'];

/** What to do about what the command left behind: nothing (exit), stop it, or wait for it. */
export type OnExitAction = 'exit' | 'stop' | 'wait';

/**
 * `auto`: what is left in the command's own process group is stopped; but a
 * command that exited 0 leaving only daemons outside its group (`pm2 start`)
 * handed its work over to them, so gsup stays and supervises them.
 */
export function onExitAction(
  policy: OnExitPolicy,
  status: number,
  leftovers: Snapshot['alive'],
  commandPgid: number | undefined,
): OnExitAction {
  if (policy === 'exit' || leftovers.length === 0) return 'exit';
  if (policy === 'stop' || policy === 'wait') return policy;
  const onlyDaemons = leftovers.every((info) => info.pgid !== commandPgid);
  return status === 0 && onlyDaemons ? 'wait' : 'stop';
}
