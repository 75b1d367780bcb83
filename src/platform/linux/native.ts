import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { loadKoffi, loadLibc } from './koffi.js';

// libc through koffi (prctl, waitid, ioctl, pidfds, exec): Node has none of
// them, and a compiled addon would need a compiler in the image. koffi ships
// prebuilt binaries. Reaping is in linux-reaping.ts.

export interface Libc {
  prctl: (option: number, arg2: number, arg3: number, arg4: number, arg5: number) => number;
  fcntl: (fd: number, command: number, arg: number) => number;
  ioctl: (fd: number, request: number, value: number[]) => number;
  waitpid: (pid: number, status: number[], options: number) => number;
  waitid: (idtype: number, id: number, info: Buffer, options: number) => number;
  pidfdOpen: (number: number, pid: number, flags: number) => number;
  pidfdSendSignal: (number: number, pidfd: number, signal: number, info: null, flags: number) => number;
  close: (fd: number) => number;
  setsid: () => number;
  ioctlValue: (fd: number, request: number, value: number) => number;
  signal: (signal: number, handler: null) => unknown;
  execvp: (file: string, argv: Array<string | null>) => number;
  /** sd_notify's socket (notify-socket.ts). */
  socket: (domain: number, type: number, protocol: number) => number;
  bind: (fd: number, address: Buffer, length: number) => number;
  shutdown: (fd: number, how: number) => number;
  errno: () => number;
  /** glibc only. */
  mallocTrim: ((pad: number) => number) | undefined;
}

function optional<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined; // musl: not there
  }
}

/** Gives the allocator's free pages back to the system (glibc's malloc_trim); nothing elsewhere. */
export function trimMalloc(): void {
  load()?.mallocTrim?.(0);
}

// pidfd_open(2) and pidfd_send_signal(2): the same numbers on every architecture.
const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_SEND_SIGNAL = 424;
// Linux 6.9: the signal goes to the process group whose id is the pidfd's process's pid (not the group it is in).
const PIDFD_SIGNAL_PROCESS_GROUP = 4;
const ESRCH = 3;
const EINVAL = 22;
const ENOSYS = 38;
const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, number]) => [number, name]));

/** An errno as its name (`EPERM`), for the log. */
export function errnoName(errno: number): string {
  return ERRNO_NAMES.get(errno) ?? `errno ${errno}`;
}

let libc: Libc | undefined;
let failure: string | undefined;
let library: { koffi: typeof import('koffi'); lib: ReturnType<typeof loadLibc> } | undefined;

/** koffi and libc as loaded by `load()`, for functions bound only where used (sockets.ts: under --listen). */
export function loadedLibrary(): typeof library {
  load();
  return library;
}

/** Why koffi could not be loaded, once `load()` has failed. */
export function nativeFailure(): string | undefined {
  return failure;
}

/** libc through koffi, or undefined with the reason in `nativeFailure()`. Loaded on first use. */
export function load(): Libc | undefined {
  if (libc || failure !== undefined) return libc;
  if (process.env.GSUP_FFI === '0') {
    failure = 'GSUP_FFI=0';
    return undefined;
  }
  try {
    const koffi = loadKoffi(import.meta.url);
    const lib = loadLibc(koffi);
    library = { koffi, lib };
    libc = {
      prctl: lib.func('int prctl(int, unsigned long, unsigned long, unsigned long, unsigned long)'),
      waitpid: lib.func('int waitpid(int, _Out_ int *, int)'),
      waitid: lib.func('int waitid(int, int, void *, int)'),
      fcntl: lib.func('int fcntl(int, int, int)'),
      ioctl: lib.func('int ioctl(int, unsigned long, _Out_ int *)'),
      // syscall(2) is variadic; these fixed prototypes pass the same registers on Linux's ABIs,
      // without koffi's per-call variadic cost.
      pidfdOpen: lib.func('syscall', 'long', ['long', 'int', 'unsigned int']),
      pidfdSendSignal: lib.func('syscall', 'long', ['long', 'int', 'int', 'void *', 'unsigned int']),
      close: lib.func('int close(int)'),
      setsid: lib.func('int setsid(void)'),
      ioctlValue: lib.func('ioctl', 'int', ['int', 'unsigned long', 'long']),
      signal: lib.func('void *signal(int, void *)'),
      execvp: lib.func('int execvp(const char *, const char **)'),
      socket: lib.func('int socket(int, int, int)'),
      bind: lib.func('int bind(int, const void *, uint32_t)'),
      shutdown: lib.func('int shutdown(int, int)'),
      errno: () => koffi.errno(),
      mallocTrim: optional(() => lib.func('int malloc_trim(size_t)')),
    };
  } catch (error) {
    failure = error instanceof Error ? error.message.split('\n')[0] : String(error);
  }
  return libc;
}

/** A pidfd: a handle on one process that no later process can take over (pids are reused, pidfds are not). */
export type Pidfd = number;

let pidfdsMissing = false;

/**
 * pidfd_open(pid): a handle on the process that has this pid now; -1 when
 * there is none (gone), undefined where pidfds cannot be had (no koffi, Linux
 * before 5.3, a seccomp filter, no fd left): then the caller falls back to
 * kill(2) after a look.
 */
export function openPidfd(pid: number): Pidfd | -1 | undefined {
  if (pidfdsMissing) return undefined;
  const native = load();
  if (!native) return undefined;
  const fd = native.pidfdOpen(SYS_PIDFD_OPEN, pid, 0);
  if (fd >= 0) return fd;
  const errno = native.errno();
  if (errno === ESRCH || errno === EINVAL) return -1;
  if (errno === ENOSYS) pidfdsMissing = true;
  return undefined;
}

let groupSignalsMissing = false;

/**
 * pidfd_send_signal: to that process, or (`group`) to the process group
 * whose id is that process's pid — the group it leads, or led: only a
 * leader's pidfd names its group. 'sent'; 'gone' (ESRCH); 'refused': the
 * kernel predates PIDFD_SIGNAL_PROCESS_GROUP (remembered), or any other
 * error (a seccomp filter): the caller falls back to the checked kill(2).
 */
export function sendPidfd(pidfd: Pidfd, signal: number, group: boolean): 'sent' | 'gone' | 'refused' {
  if (group && groupSignalsMissing) return 'refused';
  const native = load()!;
  const flags = group ? PIDFD_SIGNAL_PROCESS_GROUP : 0;
  if (native.pidfdSendSignal(SYS_PIDFD_SEND_SIGNAL, pidfd, signal, null, flags) === 0) return 'sent';
  const errno = native.errno();
  if (errno === ESRCH) return 'gone';
  if (group && errno === EINVAL) groupSignalsMissing = true;
  return 'refused';
}

export function closePidfd(pidfd: Pidfd): void {
  load()!.close(pidfd);
}

/**
 * Can gsup signal through pidfds here? Asked once at start, on gsup itself:
 * undefined when it can (`groups`: also a group through its leader's pidfd,
 * Linux 6.9), else why not. Signal 0 sends nothing.
 */
export function checkPidfds(): { problem?: string; groups: boolean } {
  const native = load();
  if (!native) return { problem: `koffi could not be loaded (${failure})`, groups: false };
  const fd = native.pidfdOpen(SYS_PIDFD_OPEN, process.pid, 0);
  if (fd < 0) {
    const errno = native.errno();
    const why = `${errnoName(errno)}${errno === ENOSYS ? ': Linux before 5.3' : ''}`;
    return { problem: `pidfd_open failed (${why})`, groups: false };
  }
  try {
    if (native.pidfdSendSignal(SYS_PIDFD_SEND_SIGNAL, fd, 0, null, 0) !== 0) {
      return { problem: `pidfd_send_signal failed (${errnoName(native.errno())})`, groups: false };
    }
    // ESRCH: gsup leads no group, yet the kernel knows the flag.
    const toGroup = native.pidfdSendSignal(SYS_PIDFD_SEND_SIGNAL, fd, 0, null, PIDFD_SIGNAL_PROCESS_GROUP);
    const groups = toGroup === 0 || native.errno() === ESRCH;
    if (!groups) groupSignalsMissing = true;
    return { groups };
  } finally {
    native.close(fd);
  }
}

const F_SETFD = 2;
const TIOCSCTTY = 0x540e;
const SIGPIPE = 13;
const SIGXFSZ = 25;

/**
 * The exec step of gsup's own helper (exec-tty.ts), for images without util-linux, busybox or a shell:
 * `session`, what `setsid -c` does (a new session, the terminal on stdin made its controlling terminal);
 * `keep`, fds above 2 the command must get (held sockets, the report channel, IPC: Node marked them
 * close-on-exec at its start). Then exec. Returns only when it fails: the errno of the step that did.
 */
export function execCommand(
  command: string,
  args: readonly string[],
  steps: { session: boolean; keep: readonly number[] },
): { step: string; errno: number } {
  const native = load();
  if (!native) return { step: `koffi (${failure})`, errno: 0 };
  if (steps.session) {
    if (native.setsid() < 0) return { step: 'setsid', errno: native.errno() };
    if (native.ioctlValue(0, TIOCSCTTY, 0) !== 0) return { step: 'ioctl(TIOCSCTTY)', errno: native.errno() };
  }
  // What Node set for itself must not reach the command: its stdio is close-on-exec, SIGPIPE and SIGXFSZ ignored.
  for (const fd of [0, 1, 2, ...steps.keep]) native.fcntl(fd, F_SETFD, 0);
  native.signal(SIGPIPE, null);
  native.signal(SIGXFSZ, null);
  native.execvp(command, [command, ...args, null]);
  return { step: 'execvp', errno: native.errno() };
}

const F_SETPIPE_SZ = 1031;
const FIONREAD = 0x541b;
const TIOCNOTTY = 0x5422;

/**
 * Gives up gsup's controlling terminal (gsup leads its session): the
 * kernel sends SIGHUP and SIGCONT to the terminal's foreground group.
 * Returns why not, or undefined.
 */
export function releaseTerminal(fd: number): string | undefined {
  const native = load();
  if (!native) return `koffi could not be loaded (${failure})`;
  return native.ioctl(fd, TIOCNOTTY, [0]) === 0 ? undefined : `ioctl(TIOCNOTTY) failed (errno ${native.errno()})`;
}

/**
 * libuv passes every signal through one pipe per loop and drops a signal
 * when that pipe is full (64 KiB, 4,096 signals). The pipe is found by what
 * `probe` (a signal to ourselves, whose handler writes at once) adds to it,
 * and widened to the most an unprivileged process may ask
 * (/proc/sys/fs/pipe-max-size, 1 MiB: 65,536 signals). Returns its new size,
 * or why not.
 */
export function widenSignalPipe(probe: () => void): number | string {
  const native = load();
  if (!native) return `koffi could not be loaded (${failure})`;
  const waiting = (fd: number) => {
    const count = [0];
    return native.ioctl(fd, FIONREAD, count) === 0 ? count[0] : -1;
  };
  const pipes: number[] = [];
  for (const entry of readdirSync('/proc/self/fd')) {
    const fd = Number(entry);
    try {
      if (fd > 2 && readlinkSync(`/proc/self/fd/${entry}`).startsWith('pipe:')) pipes.push(fd);
    } catch {
      // closed meanwhile (the fd of the readdir itself)
    }
  }
  const before = pipes.map(waiting);
  probe();
  const signalPipe = pipes.filter((fd, index) => before[index] >= 0 && waiting(fd) > before[index]);
  if (signalPipe.length === 0) return 'the signal pipe was not found';
  let size: number;
  try {
    size = Number(readFileSync('/proc/sys/fs/pipe-max-size', 'latin1').trim()) || 1 << 20;
  } catch {
    size = 1 << 20;
  }
  let result: number | string = 'fcntl(F_SETPIPE_SZ) failed';
  for (const fd of signalPipe) {
    const set = native.fcntl(fd, F_SETPIPE_SZ, size);
    result = set > 0 ? set : `fcntl(F_SETPIPE_SZ) failed (errno ${native.errno()})`;
  }
  return result;
}
