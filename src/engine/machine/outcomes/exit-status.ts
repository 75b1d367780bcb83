import type { SignalName } from '../../../platform/types.js';
import type { CommandExit } from '../values.js';

/** gsup's own failure, as `docker run` says it. */
export const EXIT_INTERNAL = 125;
export const EXIT_NOT_EXECUTABLE = 126;
export const EXIT_NOT_FOUND = 127;

/**
 * The command's code; 128+N for signal N (this system's number); 126/127
 * when it could not be run; success codes → 0.
 */
export function exitStatus(
  exit: CommandExit,
  successCodes: readonly number[],
  signalNumber: (signal: SignalName) => number,
): number {
  let status: number;
  if (exit.errorCode !== undefined) status = spawnErrorStatus(exit.errorCode);
  else if (exit.signal) status = 128 + signalNumber(exit.signal);
  else if (exit.signo !== undefined) status = 128 + exit.signo;
  else status = exit.code ?? EXIT_INTERNAL;
  return successCodes.includes(status) ? 0 : status;
}

function spawnErrorStatus(errorCode: string): number {
  if (errorCode === 'ENOENT') return EXIT_NOT_FOUND;
  if (errorCode === 'EACCES' || errorCode === 'EISDIR' || errorCode === 'ENOEXEC' || errorCode === 'EPERM')
    return EXIT_NOT_EXECUTABLE;
  return EXIT_INTERNAL;
}

/** The one line for a command that could not be started, shell style. */
export function spawnErrorMessage(command: string, errorCode: string, error?: string): string {
  if (error !== undefined) return `${command}: cannot start (${error})`;
  if (errorCode === 'ENOENT') return `${command}: command not found`;
  if (spawnErrorStatus(errorCode) === EXIT_NOT_EXECUTABLE) return `${command}: permission denied (not executable)`;
  return `${command}: cannot start (${errorCode})`;
}

// Shells and package managers (npm's title: `npm start`, `npm exec tsx …`): they run the app as a child.
const WRAPPER = /^(sh|bash|dash|ash|zsh|ksh|mksh|npm|npx|pnpm|pnpx|yarn)$/;

/** Is this process name (or command) a wrapper's? Its death of a stop signal then says nothing of the app. */
export function isWrapper(name: string): boolean {
  const [first] = name.split(' ');
  return WRAPPER.test(first.slice(first.lastIndexOf('/') + 1));
}
