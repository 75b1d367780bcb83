import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { getSystemErrorName } from 'node:util';
import { childProcess } from '../../platform/builtins.js';
import type { Platform, SignalName } from '../../platform/index.js';
import type { CommandExit } from '../machine/values.js';
import { onPath } from '../../platform/which.js';

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
  /** Where the command was found already, from `cwd` (run.ts's own look, for its exec steps): not looked for again. */
  found?: string;
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

/** Node's own handle on a child process: what node:child_process wraps (`process.binding('process_wrap')`). */
interface ProcessHandle {
  pid?: number;
  onexit: (exitCode: number, signalCode: string) => void;
  spawn(options: object): number;
  close(): void;
}
type ProcessClass = new () => ProcessHandle;

// What node:child_process reports as the child's 'error' (no process), not as a throw: a command not found,
// not executable, no process or fd left.
const REPORTED = new Set(['EACCES', 'EAGAIN', 'EMFILE', 'ENFILE', 'ENOENT']);

let handleClass: ProcessClass | null | undefined;

/**
 * Node's process handle, where it can be had without a word: not under --pending-deprecation (which makes
 * process.binding warn), and only while it still has the shape node:child_process uses. Else null.
 */
function processClass(): ProcessClass | null {
  if (handleClass !== undefined) return handleClass;
  handleClass = null;
  const warns =
    process.execArgv.some((arg) => /^--pending[-_]deprecation/.test(arg)) ||
    /--pending[-_]deprecation/.test(process.env.NODE_OPTIONS ?? '') ||
    process.env.NODE_PENDING_DEPRECATION === '1';
  if (warns) return null;
  try {
    const binding = (process as unknown as { binding(name: string): { Process?: unknown } }).binding('process_wrap');
    const Process = binding.Process as ProcessClass | undefined;
    if (typeof Process === 'function' && typeof Process.prototype.spawn === 'function') handleClass = Process;
  } catch {
    // a Node without it: node:child_process
  }
  return handleClass;
}

/**
 * A run's spawn, as node:child_process does it (the same handle, the same options: Node 20's
 * normalizeSpawnArguments and getValidStdio), for what a run needs: gsup's stdio or none, fds handed on, no
 * IPC. Loading node:child_process costs about 6 ms of gsup's start (net, stream and dgram come with it);
 * this costs nothing. Undefined when it cannot be done so (no handle, piped stdio, IPC, a NUL in a string,
 * which Node refuses with its own message): the caller spawns through node:child_process.
 */
export function directSpawn(command: string, args: string[], options: SpawnOptions): SpawnedCommand | undefined {
  const Process = processClass();
  if (!Process || options.ipc || options.stdio === 'pipe') return undefined;
  const argv = plainArgv(command, args, options.cwd);
  const pairs = argv && envPairs(options.env ?? process.env);
  if (!argv || !pairs) return undefined;
  const std =
    options.stdio === 'ignore'
      ? [{ type: 'ignore' }, { type: 'ignore' }, { type: 'ignore' }]
      : [0, 1, 2].map((fd) => ({ type: 'inherit', fd }));
  const stdio = [...std, ...(options.fds ?? []).map((fd) => ({ type: 'fd', fd }))];
  const handle = new Process();
  let reaped = false;
  let settle: (exit: CommandExit) => void = () => {};
  const exited = new Promise<CommandExit>((resolve) => (settle = resolve));
  handle.onexit = (exitCode, signalCode) => {
    reaped = true;
    handle.close();
    settle(signalCode ? { code: null, signal: signalCode as SignalName } : { code: exitCode, signal: null });
  };
  const error = handle.spawn({
    file: command,
    args: argv,
    envPairs: pairs,
    stdio,
    detached: options.detached,
    windowsHide: true,
    windowsVerbatimArguments: false,
    ...(options.cwd !== undefined && { cwd: options.cwd }),
  });
  if (error !== 0) {
    handle.close();
    const code = getSystemErrorName(error);
    if (!REPORTED.has(code)) throw Object.assign(new Error(`spawn ${code}`), { code, errno: error, syscall: 'spawn' });
    settle({ code: null, signal: null, errorCode: code });
    return { pid: undefined, exited, stdout: null, stderr: null, reaped: () => false };
  }
  return { pid: handle.pid, exited, stdout: null, stderr: null, reaped: () => reaped };
}

/** POSIX: Node's process handle straight (directSpawn) where it serves, else node:child_process. */
const posixSpawn: SpawnFunction = (command, args, options) =>
  directSpawn(command, args, options) ?? nodeSpawn(command, args, options);

/** gsup reaps a child it started itself, and tells `reaped` its status (children.ts). */
export type ReapHere = (pid: number, reaped: (exit: CommandExit) => void) => void;

/**
 * A run's command started without a fork (the platform's posix_spawn), gsup's stdio inherited, no IPC: gsup
 * reaps it itself. Undefined where it cannot be done so, or when it failed (no program ran): the caller spawns
 * through libuv, which says the failure its own way (a command not found, not executable, a script without
 * `#!` that execvp runs with sh).
 */
export function spawnHere(
  platform: Platform,
  reapHere: ReapHere,
  command: string,
  args: string[],
  options: SpawnOptions,
): SpawnedCommand | undefined {
  if (!platform.spawnProcess || options.ipc || options.stdio !== 'inherit') return undefined;
  const env = options.env ?? process.env;
  const argv = plainArgv(command, args, options.cwd);
  const path = argv && (options.found ?? onPath(command, env, options.cwd ?? process.cwd()));
  const pairs = path && envPairs(env);
  if (!argv || !path || !pairs) return undefined;
  const request = { path, argv, envPairs: pairs, detached: options.detached, cwd: options.cwd, fds: options.fds ?? [] };
  const pid = platform.spawnProcess(request);
  if (typeof pid !== 'number') return undefined;
  let reaped = false;
  let settle: (exit: CommandExit) => void = () => {};
  const exited = new Promise<CommandExit>((resolve) => (settle = resolve));
  // What libuv's process handle does for its child: Node's loop lives while the command does (signal handles
  // are unref'd).
  const alive = setInterval(() => {}, 2 ** 30);
  reapHere(pid, (exit) => {
    reaped = true;
    clearInterval(alive);
    settle(exit);
  });
  return { pid, exited, stdout: null, stderr: null, reaped: () => reaped };
}

/**
 * The argv, when the command, its arguments and directory are plain strings without a NUL; else undefined: what
 * Node validates with its own errors (an empty command, a number in argv from plain JS, a URL as cwd) is left to it.
 */
function plainArgv(command: string, args: string[], cwd: string | undefined): string[] | undefined {
  const argv = [command, ...args];
  const plain = (value: unknown) => typeof value === 'string' && !value.includes('\0');
  return command !== '' && argv.every(plain) && (cwd === undefined || plain(cwd)) ? argv : undefined;
}

/** `KEY=value` for each variable set; undefined when one holds a NUL (Node refuses it with its own message). */
function envPairs(env: NodeJS.ProcessEnv): string[] | undefined {
  const pairs: string[] = [];
  for (const key of Object.keys(env)) {
    const value = env[key];
    if (value !== undefined) pairs.push(`${key}=${value}`);
  }
  return pairs.some((pair) => pair.includes('\0')) ? undefined : pairs;
}

/**
 * The spawn for this platform; with `reapHere` (gsup reaps: PID 1, subreaper), a run's command starts without a
 * fork where it can.
 */
export function defaultSpawn(platform: Platform, reapHere?: ReapHere): SpawnFunction {
  const spawn = (platform.spawnWithExeca && execaSpawn()) || posixSpawn;
  if (!reapHere || !platform.spawnProcess) return spawn;
  return (command, args, options) =>
    spawnHere(platform, reapHere, command, args, options) ?? spawn(command, args, options);
}
