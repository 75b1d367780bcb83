import { fstatSync, readFileSync } from 'node:fs';
import { loadKoffi, loadLibc } from '../koffi.js';

const F_SETFD = 2;
const FD_CLOEXEC = 1;

/**
 * Replaces this process's image with `node <execArgv> <script> <args>` under
 * `env`: the same pid (PID 1 stays PID 1), a Node that starts afresh, with
 * fds 0–2 and the sockets of `handed` (fds handed to gsup: LISTEN_FDS).
 * Returns only when that could not be done, saying why.
 */
export function execNodeAgain(env: Record<string, string>, moduleUrl: string, handed: readonly number[] = []): string {
  let koffi: typeof import('koffi');
  let execve: (path: string, argv: Array<string | null>, envp: Array<string | null>) => number;
  let fcntl: (fd: number, command: number, value: number) => number;
  try {
    koffi = loadKoffi(moduleUrl);
    const libc = loadLibc(koffi);
    execve = libc.func('int execve(const char *, const char **, const char **)');
    fcntl = libc.func('int fcntl(int, int, int)');
  } catch (error) {
    return `koffi could not be loaded (${error instanceof Error ? error.message : String(error)})`;
  }
  // Node marks its stdio and every inherited fd close-on-exec; the next Node must find the same fds 0–2, and the
  // sockets handed to gsup (only sockets: where none was handed, Node's own fds may sit at those numbers).
  const kept = [0, 1, 2, ...handed.filter(isSocket)];
  for (const fd of kept) fcntl(fd, F_SETFD, 0);
  const argv = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  const envp = Object.entries(env).map(([key, value]) => `${key}=${value}`);
  execve(process.execPath, [...argv, null], [...envp, null]);
  const errno = koffi.errno();
  for (const fd of kept) fcntl(fd, F_SETFD, FD_CLOEXEC);
  return `execve(${process.execPath}) failed (errno ${errno})`;
}

function isSocket(fd: number): boolean {
  try {
    return fstatSync(fd).isSocket();
  } catch {
    return false;
  }
}

/**
 * This process's start time (/proc/self/stat, field 22: clock ticks since
 * boot), as text; execve(2) keeps it. Undefined where there is none.
 */
export function ownStartTime(): string | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'latin1');
  } catch {
    return undefined;
  }
  // The fields after the command name (which may hold spaces and ')'): state is field 3, start time field 22.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}
