import { getSystemErrorName } from 'node:util';
import type { SignalName } from '../../platform/index.js';
import type { CommandExit } from '../machine/values.js';

/** Node's own handle on a child process: what node:child_process wraps (`process.binding('process_wrap')`). */
interface ProcessHandle {
  pid?: number;
  onexit: (exitCode: number, signalCode: string) => void;
  spawn(options: object): number;
  close(): void;
}
type ProcessClass = new () => ProcessHandle;

/** What spawn.ts asks (its SpawnOptions; apart, so that neither file imports the other). */
interface Asked {
  detached: boolean;
  stdio: 'inherit' | 'pipe' | 'ignore';
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  ipc?: unknown;
  fds?: readonly number[];
}

/** What spawn.ts gets back (a SpawnedCommand, no output streams). */
interface Spawned {
  pid: number | undefined;
  exited: Promise<CommandExit>;
  stdout: null;
  stderr: null;
  reaped: () => boolean;
}

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
export function directSpawn(command: string, args: string[], options: Asked): Spawned | undefined {
  const Process = processClass();
  if (!Process || options.ipc || options.stdio === 'pipe') return undefined;
  // What Node validates with its own errors (an empty command, a number in argv from plain JS, a URL as cwd).
  const plain = (value: unknown) => typeof value === 'string' && !value.includes('\0');
  if (command === '' || ![command, ...args].every(plain) || (options.cwd !== undefined && !plain(options.cwd)))
    return undefined;
  const argv = [command, ...args];
  const env = options.env ?? process.env;
  const envPairs: string[] = [];
  for (const key of Object.keys(env)) {
    const value = env[key];
    if (value !== undefined) envPairs.push(`${key}=${value}`);
  }
  if (envPairs.some((pair) => pair.includes('\0'))) return undefined;
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
    envPairs,
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
