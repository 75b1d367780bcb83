import { constants } from 'node:fs';
import { loadedLibrary } from '../native.js';

// How gsup's CLI ends once its last line is out. Node's own exit, after the 'exit' listeners, joins its threads
// (V8's workers, libuv's pool), runs destructors and puts stdio back as it found it: a terminal's modes, and
// O_NONBLOCK on fds 0-2, which the command may have left changed on a description it shares with gsup. That is
// about 6 ms of a start that ends at once (`gsup -- true`). Where none of 0-2 is a terminal and their O_NONBLOCK
// is as it was, nothing of it is left to do: _exit(2), and the kernel closes what gsup holds, as on any exit.

const F_GETFL = 3;
const STDIO = [0, 1, 2];

/** The calls this needs: libc's, or a test's. */
export interface QuickExitCalls {
  fcntl(fd: number, command: number, arg: number): number;
  isatty(fd: number): number;
  exit(code: number): void;
}

/** Node flags (a profile, a trace) or coverage (NODE_V8_COVERAGE) that Node's exit writes out. */
const writesAtExit = () => process.execArgv.length > 0 || !!process.env.NODE_V8_COVERAGE;

/**
 * Taken at start (stdio as Node found it: nothing of gsup's has opened a stream on it yet): a way to end with
 * `code` at once, which returns when Node's exit has something to put back. Undefined without libc, with a
 * terminal on 0-2, or when Node's exit has something to write.
 */
export function quickExit(
  calls: QuickExitCalls | undefined,
  flagged = writesAtExit(),
): ((code: number) => void) | undefined {
  if (!calls || flagged) return undefined;
  if (STDIO.some((fd) => calls.isatty(fd) === 1)) return undefined;
  const flags = STDIO.map((fd) => calls.fcntl(fd, F_GETFL, 0));
  return (code) => {
    const changed = STDIO.some((fd) => (calls.fcntl(fd, F_GETFL, 0) ^ flags[fd]) & constants.O_NONBLOCK);
    if (!changed) calls.exit(code);
  };
}

/** libc's calls for quickExit(), bound on first use (koffi is loaded by then: the subreaper needs it). */
export function libcCalls(): QuickExitCalls | undefined {
  const loaded = loadedLibrary();
  if (!loaded) return undefined;
  try {
    return {
      fcntl: loaded.lib.func('int fcntl(int, int, int)'),
      isatty: loaded.lib.func('int isatty(int)'),
      exit: loaded.lib.func('void _exit(int)'),
    };
  } catch {
    return undefined;
  }
}
