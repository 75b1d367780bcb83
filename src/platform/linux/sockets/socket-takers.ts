import { readdir, readlink } from 'node:fs';
import { readProcFile } from '../proc/proc-read.js';

// Who takes a held socket, as the kernel shows it (for a run whose processes say nothing of it: no preload,
// a native server): a process that watches the socket in an epoll set (Node, Go, Rust, nginx, asyncio), or
// one that waits in accept(2) on it (a blocking server). A socket only inherited, and never used, is neither.
// Read asynchronously, a few links at a time: a sample runs on a timer beside the loop that takes signals.

// accept and accept4, by architecture (the generic table: arm64, riscv64).
const ACCEPT: Record<string, readonly number[]> = {
  x64: [43, 288],
  arm64: [202, 242],
  riscv64: [202, 242],
  arm: [285, 366],
};
// A sample of a large tree stops here: it is a hint, not a look.
const MAX_PROCESSES = 64;
const MAX_FDS = 4096;
/** Threads of a process whose system call is read (a JVM has dozens; a pool of thousands is cut). */
const MAX_THREADS = 1024;
/** Links read in one sample, at most, and at once. */
const MAX_LINKS = 8192;
const AT_ONCE = 32;

const names = (path: string) =>
  new Promise<string[]>((resolve) => readdir(path, (error, found) => resolve(error ? [] : found)));
const linkOf = (path: string) =>
  new Promise<string | undefined>((resolve) => readlink(path, (error, link) => resolve(error ? undefined : link)));
const text = async (path: string, maxBytes: number) => (await readProcFile(path, maxBytes))?.toString('latin1') ?? '';

/** The root and its descendants (/proc/PID/task/TID/children), at most MAX_PROCESSES. */
async function descendants(root: number): Promise<number[]> {
  const pids = [root];
  for (let index = 0; index < pids.length && pids.length < MAX_PROCESSES; index++) {
    for (const task of await names(`/proc/${pids[index]}/task`)) {
      const children = await text(`/proc/${pids[index]}/task/${task}/children`, 65536);
      for (const child of children.split(' ')) if (child !== '' && child !== '\n') pids.push(Number(child));
    }
  }
  return pids.slice(0, MAX_PROCESSES);
}

/** Inode numbers of a socket link (`socket:[123]`), else undefined. */
function socketInode(link: string): number | undefined {
  return link.startsWith('socket:[') ? Number(link.slice(8, -1)) : undefined;
}

/** The held inodes this process takes now: in its epoll sets' targets, or its accept(2) on one. */
async function takenBy(pid: number, inodes: ReadonlySet<number>, budget: { links: number }): Promise<number[]> {
  const fds = (await names(`/proc/${pid}/fd`)).slice(0, Math.min(MAX_FDS, budget.links)); // [] when gone
  budget.links -= fds.length;
  const taken = new Set<number>();
  const held = new Map<number, number>(); // fd → inode, for the accept(2) check
  for (let start = 0; start < fds.length; start += AT_ONCE) {
    const batch = fds.slice(start, start + AT_ONCE);
    const links = await Promise.all(batch.map((fd) => linkOf(`/proc/${pid}/fd/${fd}`)));
    for (const [index, link] of links.entries()) {
      if (link === undefined) continue;
      const inode = socketInode(link);
      if (inode !== undefined && inodes.has(inode)) held.set(Number(batch[index]), inode);
      if (link !== 'anon_inode:[eventpoll]') continue;
      // One line per watched file: `tfd: 3 events: 19 data: … pos:0 ino:2a3b sdev:8`.
      const info = await text(`/proc/${pid}/fdinfo/${batch[index]}`, 65536);
      for (const match of info.matchAll(/^tfd:.*\bino:([0-9a-f]+)/gm)) {
        const watched = parseInt(match[1], 16);
        if (inodes.has(watched)) taken.add(watched);
      }
    }
  }
  if (held.size > 0) for (const inode of await accepting(pid, held)) taken.add(inode);
  return [...taken];
}

/**
 * The held inodes some thread of `pid` waits in accept(2) on: a blocking server often accepts in a thread of its
 * own (Java, threaded Python), never seen in the main thread's /proc/PID/syscall. Each thread's `NR arg0 …`, read
 * while it is in a system call (the threads share the fd table: `held` is theirs too).
 */
async function accepting(pid: number, held: ReadonlyMap<number, number>): Promise<number[]> {
  const found: number[] = [];
  const calls = ACCEPT[process.arch];
  if (!calls) return found;
  const tasks = (await names(`/proc/${pid}/task`)).slice(0, MAX_THREADS);
  for (let start = 0; start < tasks.length; start += AT_ONCE) {
    const lines = await Promise.all(
      tasks.slice(start, start + AT_ONCE).map((task) => text(`/proc/${pid}/task/${task}/syscall`, 512)),
    );
    for (const line of lines) {
      const call = line.split(' ');
      const inode = calls.includes(Number(call[0])) ? held.get(Number(call[1])) : undefined;
      if (inode !== undefined) found.push(inode);
    }
  }
  return found;
}

/** Which processes of `root`'s tree take one of these socket inodes now, each with the inode. */
export async function socketTakers(
  root: number,
  inodes: ReadonlySet<number>,
): Promise<Array<{ pid: number; ino: number }>> {
  const found: Array<{ pid: number; ino: number }> = [];
  const budget = { links: MAX_LINKS };
  for (const pid of await descendants(root)) {
    if (budget.links <= 0) break;
    for (const ino of await takenBy(pid, inodes, budget)) found.push({ pid, ino });
  }
  return found;
}
