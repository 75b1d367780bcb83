import { NODE_OPTIONS_PASSED } from '../../platform/linux/exec-tty-env.js';
import { resolve } from 'node:path';
import type { SupervisorConfig } from '../config/config.js';
import type { Platform, SignalName } from '../../platform/index.js';
import type { SuperviseOptions } from '../config/api.js';
import { onPath } from '../../platform/which.js';
import { defaultSpawn, type SpawnedCommand } from './spawn.js';
import type { CommandExit } from '../machine/values.js';

/** One run of the command (a restart makes a new one). */
export interface CommandRun {
  id: number;
  pid: number | undefined;
  /** Its process group, when it leads one (`group` target). */
  pgid: number | undefined;
  spawned: SpawnedCommand;
  args: string[];
  startedAt: number;
  exit?: CommandExit;
  /** Signals gsup forwarded while it ran (a death by one of them is not a failure). */
  sent: Set<SignalName>;
  /** Whether the command is itself a pm2 manager (looked up once, at the first forward). */
  manager?: boolean;
  /** Its pid (and group id) still names it: Node has not reaped it. */
  unreaped(): boolean;
  /**
   * A signal to the group it leads (`group` target), through the handle taken
   * at its spawn (Linux: its pidfd, which names that group and no later one);
   * by number only while it is unreaped. False when there is none.
   */
  signalGroup(signal: SignalName): boolean;
}

/**
 * Spawns the command: in a session and group of its own for the `group`
 * target, else in gsup's. `terminal`: an argv prefix (setsid -c) that makes
 * the session itself and gives it gsup's terminal; a command that cannot be
 * found is spawned without it, so Node reports it as usual.
 */
export function spawnRun(
  id: number,
  command: string,
  args: string[],
  config: SupervisorConfig,
  options: SuperviseOptions,
  platform: Platform,
  terminal?: string[],
  ipc?: (message: unknown) => unknown,
): CommandRun {
  const group = config.target === 'group';
  const wrap =
    group && terminal !== undefined && onPath(command, options.env ?? process.env, options.cwd ?? '/') !== undefined;
  // gsup's own exec helper is a node: the app's NODE_OPTIONS pass it by, for the command (exec-tty.ts).
  const env = wrap && terminal[0] === process.execPath ? passNodeOptionsBy(options.env ?? process.env) : options.env;
  const spawned = (options.spawn ?? defaultSpawn(platform))(
    wrap ? terminal[0] : command,
    wrap ? [...terminal.slice(1), command, ...args] : args,
    {
      // setsid(1) forks first when it leads a group already: it must not.
      detached: group && !wrap,
      stdio: options.stdio ?? 'inherit',
      env,
      cwd: options.cwd,
      ...(ipc && { ipc }),
    },
  );
  // While certain: Node cannot have reaped it before this line. Let go once Node has.
  const held = spawned.pid === undefined ? undefined : platform.holdChild(spawned.pid);
  if (held) void spawned.exited.then(() => platform.releaseChild(held));
  const run: CommandRun = {
    id,
    pid: spawned.pid,
    // setsid() (Node's or setsid -c's): the command leads its own session and group.
    pgid: group ? spawned.pid : undefined,
    spawned,
    args,
    startedAt: Date.now(),
    sent: new Set(),
    unreaped: () => spawned.pid !== undefined && run.exit === undefined && !(spawned.reaped?.() ?? false),
    signalGroup: (signal) => !!held && !!run.pgid && platform.signalChild(held, signal, true, run.unreaped()),
  };
  return run;
}

/** Before the first spawn (or when a stop signal came first): no process, nothing to signal. */
export function notStarted(): CommandRun {
  return {
    id: 0,
    pid: undefined,
    pgid: undefined,
    spawned: { pid: undefined, exited: new Promise(() => {}), stdout: null, stderr: null },
    args: [],
    startedAt: 0,
    sent: new Set(),
    unreaped: () => false,
    signalGroup: () => false,
  };
}

/** The directory the command starts in, made absolute now: restarts come after gsup has left it. */
export function startDirectory(cwd: string | undefined): string | undefined {
  try {
    return resolve(cwd ?? process.cwd());
  } catch {
    return cwd; // the start directory was removed: the spawn says so
  }
}

/** NODE_OPTIONS under another name, which gsup's exec helper gives back before it execs the command. */
function passNodeOptionsBy(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.NODE_OPTIONS === undefined) return env;
  const { NODE_OPTIONS, ...rest } = env;
  return { ...rest, [NODE_OPTIONS_PASSED]: NODE_OPTIONS };
}
