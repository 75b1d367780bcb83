import { resolve } from 'node:path';
import type { SupervisorConfig } from '../config/config.js';
import type { Platform, SignalName } from '../../platform/index.js';
import type { SuperviseOptions } from '../config/api.js';
import { onPath, sameFile } from '../../platform/which.js';
import { defaultSpawn, type SpawnedCommand } from './spawn.js';
import { execSteps } from './exec-steps.js';
import type { RunHandover } from '../listen/handover.js';
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
 * the session itself and gives it gsup's terminal; `handed`: the held
 * sockets (--listen), at fds 3… with the exec step that sets LISTEN_PID. A
 * command that cannot be found is spawned without either step, so Node
 * reports it as usual.
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
  handed?: RunHandover,
): CommandRun {
  const group = config.target === 'group';
  const stepped = (group && terminal !== undefined) || handed?.exec !== undefined;
  const path = stepped ? onPath(command, options.env ?? process.env, options.cwd ?? '/') : undefined;
  // gsup's own Node with the preload first in it: the preload sets LISTEN_PID before the app runs, and the exec
  // step would only cost a shell's start (~5 ms).
  const exec =
    handed?.preloadFirst && path !== undefined && sameFile(path, process.execPath) ? undefined : handed?.exec;
  const fds = handed?.fds ?? [];
  const steps = path
    ? execSteps(group ? terminal : undefined, exec, options.env, {
        count: fds.length,
        channel: ipc ? 3 + fds.length : undefined,
      })
    : { prefix: [], env: options.env, session: false };
  const [first = command, ...rest] = steps.prefix;
  const spawned = (options.spawn ?? defaultSpawn(platform))(
    first,
    steps.prefix.length > 0 ? [...rest, command, ...args] : args,
    {
      // setsid(1) forks first when it leads a group already: it must not.
      detached: group && !steps.session,
      stdio: options.stdio ?? 'inherit',
      env: steps.env,
      cwd: options.cwd,
      ...(ipc && { ipc }),
      ...(fds.length > 0 && { fds }),
      // No step before it: the command itself, found just above (a start under --listen looks once, not twice).
      ...(path !== undefined && steps.prefix.length === 0 && options.cwd !== undefined && { found: path }),
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
  return unspawned(0, [], new Promise(() => {}), 0);
}

/**
 * Run `id` that gsup could not prepare or spawn (a socketpair, a notify socket, the spawn itself threw): no
 * process; its end is that failure, told as a spawn's error is (the machine decides: a failed reload, or a
 * failed start under the restart policy), never an internal error.
 */
export function failedRun(id: number, args: string[], error: unknown): CommandRun {
  const errorCode = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN';
  const message = error instanceof Error ? error.message : String(error);
  return unspawned(id, args, Promise.resolve({ code: null, signal: null, errorCode, error: message }), Date.now());
}

function unspawned(id: number, args: string[], exited: Promise<CommandExit>, startedAt: number): CommandRun {
  return {
    id,
    pid: undefined,
    pgid: undefined,
    spawned: { pid: undefined, exited, stdout: null, stderr: null },
    args,
    startedAt,
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
