import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import { load, nativeFailure, type Libc } from '../native.js';
import { liveGroup, readInfo } from '../proc/stat.js';
import type { ReapedChild, ReapResult } from '../../types.js';

// Orphans reparented to gsup (PID 1, subreaper), reaped O(1) each through
// waitid/waitpid: never waitpid(-1), which would take the command's status
// from Node/libuv.

const PR_SET_PDEATHSIG = 1;
const PR_SET_CHILD_SUBREAPER = 36;
const WNOHANG = 1;
const P_ALL = 0;
const WEXITED = 4;
const WNOWAIT = 0x01000000;
const CLD_EXITED = 1;
// siginfo_t: si_pid is the first field of the union, at byte 16 on 64-bit Linux (12 on 32-bit).
const SI_PID_OFFSET =
  process.arch === 'x64' ||
  process.arch === 'arm64' ||
  process.arch === 'ppc64' ||
  process.arch === 's390x' ||
  process.arch === 'riscv64'
    ? 16
    : 12;
const siginfo = Buffer.alloc(128);

/**
 * Gets ready to reap, and with `subreaper` sets PR_SET_CHILD_SUBREAPER so that
 * orphans of the tree are reparented to gsup, not to PID 1. Returns why not.
 */
export function adoptOrphans(subreaper: boolean): string | undefined {
  const native = load();
  if (!native) return `koffi could not be loaded (${nativeFailure()})`;
  if (subreaper && native.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) !== 0)
    return `prctl(PR_SET_CHILD_SUBREAPER) failed (errno ${native.errno()})`;
  return undefined;
}

/**
 * PR_SET_PDEATHSIG: the kernel sends `signal` to gsup when the thread that
 * started gsup ends. Asked from the main thread (the setting is the calling
 * thread's). Returns why not.
 */
export function askParentDeathSignal(signal: number): string | undefined {
  const native = load();
  if (!native) return `koffi could not be loaded (${nativeFailure()})`;
  if (native.prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0) === 0) return undefined;
  return `prctl(PR_SET_PDEATHSIG) failed (errno ${native.errno()})`;
}

/**
 * Every child of this process (any thread's), from /proc/self/task/TID/children;
 * undefined where the kernel has no such file (CONFIG_PROC_CHILDREN) or it is
 * hidden: then no answer is better than "none".
 */
export function ownChildren(): number[] | undefined {
  const pids: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  // The main thread lives as long as gsup: its file missing means the kernel has none.
  if (!tasks.includes(String(process.pid))) return undefined;
  for (const task of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/self/task/${task}/children`, 'latin1');
    } catch {
      if (task === String(process.pid)) return undefined;
      continue; // a thread that ended meanwhile
    }
    for (const pid of text.split(' ')) if (pid) pids.push(Number(pid));
  }
  return pids;
}

// gsup's children, as the kernel lists them under its main thread. Node forks
// on its loop's thread (the main one, unless the library runs in a worker: then
// its children are Node's own, known by pid), and orphans go to the main
// thread: as PID 1 it is the namespace's reaper, as subreaper the first live
// thread of gsup. While it reads, nothing leaves its list (only its own waits
// reap a child), so one pass misses none. The main thread's id is the
// process's as this /proc counts it (a PID namespace without a /proc of its
// own counts otherwise than process.pid): read once, where /proc/self points.
let mainChildren: string | undefined;
let childrenBuffer: Buffer | undefined;
// Children looked at one by one before the answer is "maybe" (a look at the tree then tells).
const CHILDREN_CHECKED = 64;
const ZERO = 48;

/**
 * Has gsup a live child that is not in `known` (Node's own) and not in the
 * group `pgid` (the command's, already signalled)? Such an orphan may lead
 * a root of the tree; a zombie cannot (its children came to gsup). The main
 * thread's children file is read into a buffer kept for it, and each other
 * child's stat into another: the work does not grow with gsup's threads and
 * makes next to no garbage (the signal path asks). Past CHILDREN_CHECKED
 * children, yes. Undefined where the kernel has no such file.
 */
export function childOutside(known: ReadonlySet<number>, pgid: number | undefined): boolean | undefined {
  let fd: number;
  try {
    mainChildren ??= `/proc/self/task/${readlinkSync('/proc/self')}/children`;
    fd = openSync(mainChildren, 'r');
  } catch {
    return undefined;
  }
  let checked = 0;
  const outside = (pid: number) => {
    if (known.has(pid)) return false;
    if (++checked > CHILDREN_CHECKED) return true;
    const group = liveGroup(pid);
    return group !== -1 && group !== pgid;
  };
  try {
    const buffer = (childrenBuffer ??= Buffer.allocUnsafe(4096));
    let pid = 0;
    for (let length; (length = readSync(fd, buffer, 0, buffer.length, null)) > 0;) {
      for (let at = 0; at < length; at++) {
        const digit = buffer[at] - ZERO;
        if (digit >= 0 && digit <= 9) pid = pid * 10 + digit;
        else if (pid > 0) {
          if (outside(pid)) return true;
          pid = 0;
        }
      }
    }
    return pid > 0 && outside(pid);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** gsup's children the slow way, by a look at every process (where ownChildren cannot tell). */
function childrenByScan(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const code = entry.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    if (readInfo(Number(entry))?.ppid === process.pid) pids.push(Number(entry));
  }
  return pids;
}

function isZombie(pid: number): boolean {
  return readInfo(pid)?.state === 'Z';
}

/**
 * Reaps one zombie child of gsup that Node did not spawn, in O(1): waitid
 * with WNOWAIT names a child that can be reaped without reaping it; if it is
 * not one of Node's (`keep`), waitpid takes it by pid. Never waitpid(-1):
 * Node/libuv must still get the exit status of the command. 'none': no child
 * to reap; 'blocked': the first one is Node's, which libuv has yet to take
 * (reapZombies can look past it).
 */
export function reapOne(keep: Pick<ReadonlySet<number>, 'has' | 'size'>): ReapedChild | 'none' | 'blocked' {
  const native = load();
  if (!native) return 'none';
  siginfo.fill(0);
  // With no child of Node's in the way, one call reaps; else peek first (WNOWAIT), then reap by pid.
  const direct = keep.size === 0;
  // ECHILD: no children at all.
  if (native.waitid(P_ALL, 0, siginfo, WEXITED | WNOHANG | (direct ? 0 : WNOWAIT)) !== 0) return 'none';
  const pid = siginfo.readInt32LE(SI_PID_OFFSET);
  if (pid === 0) return 'none';
  if (direct) {
    const code = siginfo.readInt32LE(8);
    const status = siginfo.readInt32LE(SI_PID_OFFSET + 8);
    return code === CLD_EXITED ? { pid, code: status, signal: null } : { pid, code: null, signal: status };
  }
  if (keep.has(pid)) return 'blocked';
  return reapPid(native, pid) ?? 'none';
}

/** Has this process any child at all, alive or zombie (waitid answers ECHILD when not)? O(1), unlike a walk of them. */
export function hasChildren(): boolean | undefined {
  const native = load();
  if (!native) return undefined;
  return native.waitid(P_ALL, 0, siginfo, WEXITED | WNOHANG | WNOWAIT) === 0;
}

function reapPid(native: Libc, pid: number): ReapedChild | undefined {
  const status = [0];
  if (native.waitpid(pid, status, WNOHANG) !== pid) return undefined;
  const raw = status[0];
  const signal = raw & 0x7f;
  return signal === 0 ? { pid, code: (raw >> 8) & 0xff, signal: null } : { pid, code: null, signal };
}

/**
 * Reaps every zombie child that Node did not spawn, by a walk of gsup's
 * children: O(children), for when reapOne is blocked behind one of Node's.
 */
export function reapZombies(keep: Pick<ReadonlySet<number>, 'has' | 'size'>): ReapResult {
  const native = load();
  const result: ReapResult = { reaped: [], notYet: 0 };
  // No child at all (the command reaped by Node already): no walk.
  if (!native || !hasChildren()) return result;
  for (const pid of ownChildren() ?? childrenByScan()) {
    if (keep.has(pid) || !isZombie(pid)) continue;
    // A process whose main thread is a zombie is not reapable until its
    // other threads are gone too (waitpid answers 0): the next SIGCHLD says when.
    const child = reapPid(native, pid);
    if (child) result.reaped.push(child);
    else result.notYet++;
  }
  return result;
}
