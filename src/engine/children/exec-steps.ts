import { EXEC_CHANNEL, EXEC_KEEP, EXEC_STEPS, NODE_OPTIONS_PASSED } from '../../platform/linux/process/exec-tty-env.js';

/** What comes between the spawn and the command's exec: argv before the command, and the environment. */
export interface ExecSteps {
  readonly prefix: string[];
  readonly env: NodeJS.ProcessEnv | undefined;
  /** A step makes the session itself (setsid -c): the spawn must not. */
  readonly session: boolean;
}

/**
 * The exec steps of a run, composed: the terminal handed over (`setsid -c`, or gsup's own helper), then
 * LISTEN_PID set to the command's own pid (`sh -c '… exec "$0" "$@"'`, or gsup's own helper). Where the
 * terminal's step is gsup's helper (a node) it does both in one exec. Each step execs: the command keeps
 * the pid the spawn gave. gsup's helper is told, in its environment, which fds it must keep open (Node
 * marks inherited fds close-on-exec at its start) and where the IPC channel is.
 */
export function execSteps(
  terminal: readonly string[] | undefined,
  listenPid: { argv: string[]; helper: boolean } | undefined,
  env: NodeJS.ProcessEnv | undefined,
  fds: { count: number; channel: number | undefined },
): ExecSteps {
  const prefix: string[] = [];
  const steps: string[] = [];
  const terminalHelper = terminal?.[0] === process.execPath;
  if (terminal) prefix.push(...terminal);
  if (terminalHelper) steps.push('session');
  if (listenPid && terminalHelper) steps.push('listen-pid');
  else if (listenPid) {
    prefix.push(...listenPid.argv);
    if (listenPid.helper) steps.push('listen-pid');
  }
  const session = terminal !== undefined;
  if (steps.length === 0) return { prefix, env, session };
  // gsup's own helper is a node: the app's NODE_OPTIONS pass it by, for the command (exec-tty.ts).
  const base = passNodeOptionsBy(env ?? process.env);
  const keep = fds.count + (fds.channel === undefined ? 0 : 1);
  const told: NodeJS.ProcessEnv = { ...base, [EXEC_STEPS]: steps.join(','), [EXEC_KEEP]: String(keep) };
  if (fds.channel !== undefined) told[EXEC_CHANNEL] = String(fds.channel);
  return { prefix, env: told, session };
}

/** NODE_OPTIONS under another name, which gsup's exec helper gives back before it execs the command. */
function passNodeOptionsBy(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.NODE_OPTIONS === undefined) return env;
  const { NODE_OPTIONS, ...rest } = env;
  return { ...rest, [NODE_OPTIONS_PASSED]: NODE_OPTIONS };
}
