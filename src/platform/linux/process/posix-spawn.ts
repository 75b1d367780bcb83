import { getSystemErrorName } from 'node:util';
import { load, loadedLibrary } from '../native.js';
import type { SpawnRequest } from '../../types.js';

// A run's command started by posix_spawn(3): glibc and musl clone the parent's memory instead of copying it and
// wait only for the exec, where libuv's fork copies Node's whole memory map and the child's exec tears it down
// again: about 4 ms of every start on a 2-core machine. The child is set up as libuv's would be: every signal at
// its default and none blocked, a session of its own (detached), the working directory, gsup's fds at 3…, and
// stdio 0-2 made blocking (libuv's child clears O_NONBLOCK on them, which gsup shares). libuv never hears of
// this child: gsup reaps it (engine/children/children.ts).

const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;
// Larger than posix_spawn_file_actions_t, posix_spawnattr_t and sigset_t of any libc koffi runs on.
const OPAQUE_BYTES = 1024;

interface SpawnCalls {
  spawn(pid: number[], path: string, actions: Buffer, attr: Buffer, argv: unknown[], envp: unknown[]): number;
  actionsInit(actions: Buffer): number;
  actionsDestroy(actions: Buffer): number;
  dup2(actions: Buffer, fd: number, target: number): number;
  chdir(actions: Buffer, path: string): number;
  attrInit(attr: Buffer): number;
  attrDestroy(attr: Buffer): number;
  flags(attr: Buffer, flags: number): number;
  mask(attr: Buffer, set: Buffer): number;
  defaults(attr: Buffer, set: Buffer): number;
  emptySet(set: Buffer): number;
  fullSet(set: Buffer): number;
  fcntl(fd: number, command: number, value: number): number;
}

let calls: SpawnCalls | null | undefined;

/** libc's calls, bound on first use; null where one is missing (a libc without addchdir_np): libuv spawns. */
function bound(): SpawnCalls | null {
  if (calls !== undefined) return calls;
  calls = null;
  const native = load();
  const lib = loadedLibrary()?.lib;
  if (!native || !lib) return calls;
  try {
    calls = {
      spawn: lib.func('int posix_spawn(_Out_ int *, const char *, void *, void *, const char **, const char **)'),
      actionsInit: lib.func('int posix_spawn_file_actions_init(void *)'),
      actionsDestroy: lib.func('int posix_spawn_file_actions_destroy(void *)'),
      dup2: lib.func('int posix_spawn_file_actions_adddup2(void *, int, int)'),
      chdir: lib.func('int posix_spawn_file_actions_addchdir_np(void *, const char *)'),
      attrInit: lib.func('int posix_spawnattr_init(void *)'),
      attrDestroy: lib.func('int posix_spawnattr_destroy(void *)'),
      flags: lib.func('int posix_spawnattr_setflags(void *, short)'),
      mask: lib.func('int posix_spawnattr_setsigmask(void *, const void *)'),
      defaults: lib.func('int posix_spawnattr_setsigdefault(void *, const void *)'),
      emptySet: lib.func('int sigemptyset(void *)'),
      fullSet: lib.func('int sigfillset(void *)'),
      fcntl: native.fcntl,
    };
  } catch {
    calls = null;
  }
  return calls;
}

/**
 * The command started by posix_spawn: its pid; an errno name when posix_spawn failed (no program ran); undefined
 * where it cannot be done so (no koffi or no call for it, an fd of gsup's in the way of fds 3…, a closed stdio fd):
 * the caller then spawns through libuv, which says any failure its own way.
 */
export function posixSpawn(request: SpawnRequest): number | string | undefined {
  const libc = bound();
  if (!libc) return undefined;
  const { fds } = request;
  // Each fd dup2'ed to its place from above them all: one already among 0…2+n would be overwritten first.
  if (fds.some((fd) => fd < 3 + fds.length)) return undefined;
  const flags = [0, 1, 2].map((fd) => libc.fcntl(fd, F_GETFL, 0));
  const closing = [0, 1, 2].map((fd) => libc.fcntl(fd, F_GETFD, 0));
  if ([...flags, ...closing].some((value) => value < 0)) return undefined;
  const actions = Buffer.alloc(OPAQUE_BYTES);
  const attr = Buffer.alloc(OPAQUE_BYTES);
  if (libc.actionsInit(actions) !== 0) return undefined;
  if (libc.attrInit(attr) !== 0) {
    libc.actionsDestroy(actions);
    return undefined;
  }
  try {
    const none = Buffer.alloc(OPAQUE_BYTES);
    const all = Buffer.alloc(OPAQUE_BYTES);
    // Signals 1-64 all: sigfillset leaves out the libc's own (glibc 32 and 33, musl 32-34), which its child would
    // then leave ignored across the exec; libuv's child cannot touch them, and the exec makes them default.
    const filled = libc.fullSet(all) === 0;
    all.fill(0xff, 0, 8);
    const set =
      filled &&
      libc.emptySet(none) === 0 &&
      libc.mask(attr, none) === 0 &&
      libc.defaults(attr, all) === 0 &&
      libc.flags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (request.detached ? POSIX_SPAWN_SETSID : 0)) ===
        0 &&
      fds.every((fd, index) => libc.dup2(actions, fd, 3 + index) === 0) &&
      (request.cwd === undefined || libc.chdir(actions, request.cwd) === 0);
    if (!set) return undefined;
    // As libuv's child does to the stdio it inherits: blocking (the file's flags, which gsup shares), and kept
    // open across the exec (Node marks gsup's own close-on-exec; put back once the exec is done).
    flags.forEach((value, fd) => value & O_NONBLOCK && libc.fcntl(fd, F_SETFL, value & ~O_NONBLOCK));
    closing.forEach((value, fd) => value & FD_CLOEXEC && libc.fcntl(fd, F_SETFD, value & ~FD_CLOEXEC));
    const pid = [0];
    try {
      const error = libc.spawn(pid, request.path, actions, attr, [...request.argv, null], [...request.envPairs, null]);
      return error === 0 ? pid[0] : getSystemErrorName(-error);
    } finally {
      closing.forEach((value, fd) => value & FD_CLOEXEC && libc.fcntl(fd, F_SETFD, value));
    }
  } finally {
    libc.attrDestroy(attr);
    libc.actionsDestroy(actions);
  }
}
