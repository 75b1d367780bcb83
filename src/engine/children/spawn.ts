import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { childProcess } from '../../platform/builtins.js';
import type { Platform, SignalName } from '../../platform/index.js';
import type { CommandExit } from '../machine/values.js';
import { directSpawn } from './direct-spawn.js';

export interface SpawnOptions {
  /** A session and process group of its own (setsid), for the `group` target. */
  detached: boolean;
  stdio: 'inherit' | 'pipe' | 'ignore';
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** An IPC channel (Node's), its messages to this: `process.send('ready')` (node:child_process only). */
  ipc?: (message: unknown) => unknown;
  /** gsup's fds the child gets at 3, 4, … (held sockets, a report channel), before the IPC channel. */
  fds?: readonly number[];
}

export interface SpawnedCommand {
  /** Undefined when the command could not be started. */
  pid: number | undefined;
  exited: Promise<CommandExit>;
  stdout: Readable | null;
  stderr: Readable | null;
  /**
   * Has the child been reaped (its pid free for reuse)? True from the moment Node took its status,
   * before `exited` settles.
   */
  reaped?: () => boolean;
}

export type SpawnFunction = (command: string, args: string[], options: SpawnOptions) => SpawnedCommand;

/**
 * POSIX: node:child_process, as it is. gsup turns off everything execa adds
 * (cleanup, buffering, rejection, forced kill), and loading execa costs about
 * 20 ms — most of gsup's start-up budget (1.3× `node -e 0`).
 */
export const nodeSpawn: SpawnFunction = (command, args, options) => {
  const { ipc, fds = [] } = options;
  const std = options.stdio;
  // Node tells the child where its IPC channel is (NODE_CHANNEL_FD): after the fds, whatever their number.
  const more = [...fds, ...(ipc ? ['ipc' as const] : [])];
  const child = childProcess().spawn(command, args, {
    stdio: more.length > 0 ? [std, std, std, ...more] : std,
    detached: options.detached,
    env: options.env,
    cwd: options.cwd,
    windowsHide: true,
  });
  let reaped = false;
  child.once('exit', () => (reaped = true));
  if (ipc) {
    child.on('message', ipc);
    // A process the command left may hold the channel: it must not keep gsup (or a library's host) alive.
    child.once('exit', () => child.connected && child.disconnect());
  }
  const exited = new Promise<CommandExit>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      // An error after a successful spawn (a failed kill) is not the end of the command.
      if (child.pid === undefined) resolve({ code: null, signal: null, errorCode: error.code ?? 'EUNKNOWN' });
    });
    child.once('exit', (code, signal) => resolve({ code, signal: signal as SignalName | null }));
  });
  return { pid: child.pid, exited, stdout: child.stdout, stderr: child.stderr, reaped: () => reaped };
};

/**
 * Windows: execa, whose cross-spawn runs `npm`/`npx` `.cmd` shims and
 * PATHEXT lookups the way a shell would. Loaded only there (require of an ES
 * module needs Node 20.19+; older Nodes fall back to node:child_process).
 */
export function execaSpawn(): SpawnFunction | undefined {
  let execa: typeof import('execa').execa;
  try {
    ({ execa } = createRequire(import.meta.url)('execa') as typeof import('execa'));
  } catch {
    return undefined;
  }
  return (command, args, options) => {
    const subprocess = execa(command, args, {
      stdio: options.stdio,
      detached: options.detached,
      env: options.env,
      extendEnv: options.env === undefined,
      cwd: options.cwd,
      // gsup owns the signals and the stop: no signal-exit handlers, no kill
      // of its own, no timeout, no output kept in memory, never a rejection.
      cleanup: false,
      reject: false,
      forceKillAfterDelay: false,
      buffer: false,
      windowsHide: true,
    });
    const exited = subprocess.then((result): CommandExit => {
      if (result.exitCode === undefined && result.signal === undefined) {
        return { code: null, signal: null, errorCode: result.code ?? 'EUNKNOWN' };
      }
      return { code: result.exitCode ?? null, signal: (result.signal as SignalName | undefined) ?? null };
    });
    return { pid: subprocess.pid, exited, stdout: subprocess.stdout, stderr: subprocess.stderr };
  };
}

/** POSIX: Node's process handle straight (direct-spawn.ts) where it serves, else node:child_process. */
const posixSpawn: SpawnFunction = (command, args, options) =>
  directSpawn(command, args, options) ?? nodeSpawn(command, args, options);

/** The spawn for this platform. */
export function defaultSpawn(platform: Platform): SpawnFunction {
  return (platform.spawnWithExeca && execaSpawn()) || posixSpawn;
}
