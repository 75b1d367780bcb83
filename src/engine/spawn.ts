import type { Readable } from 'node:stream';
import { execa } from 'execa';
import type { SignalName } from '../platform/index.js';

/** How the command ended: an exit code, a signal, or a spawn error (ENOENT, EACCES, ...). */
export interface CommandExit {
  code: number | null;
  signal: SignalName | null;
  /** Set when the command could not be started. */
  errorCode?: string;
}

export interface SpawnOptions {
  /** A session and process group of its own (setsid), for the `group` target. */
  detached: boolean;
  stdio: 'inherit' | 'pipe' | 'ignore';
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface SpawnedCommand {
  /** Undefined when the command could not be started. */
  pid: number | undefined;
  exited: Promise<CommandExit>;
  stdout: Readable | null;
  stderr: Readable | null;
}

export type SpawnFunction = (command: string, args: string[], options: SpawnOptions) => SpawnedCommand;

/** The real spawn, through execa, with everything that would fight gsup turned off. */
export const execaSpawn: SpawnFunction = (command, args, options) => {
  const subprocess = execa(command, args, {
    stdio: options.stdio,
    detached: options.detached,
    env: options.env,
    extendEnv: options.env === undefined,
    cwd: options.cwd,
    // gsup owns the signals and the stop: no signal-exit handlers, no kill of
    // its own, no timeout, no output kept in memory, never a rejection.
    cleanup: false,
    reject: false,
    forceKillAfterDelay: false,
    buffer: false,
    windowsHide: true,
  });
  const exited = subprocess.then(
    (result): CommandExit => {
      if (result.exitCode === undefined && result.signal === undefined) {
        return { code: null, signal: null, errorCode: result.code ?? 'EUNKNOWN' };
      }
      return { code: result.exitCode ?? null, signal: (result.signal as SignalName | undefined) ?? null };
    },
  );
  return { pid: subprocess.pid, exited, stdout: subprocess.stdout, stderr: subprocess.stderr };
};
