import { readdirSync, readlinkSync } from 'node:fs';
import { readSmallRegularFile } from '../small-file.js';

// Who takes a held socket, as the kernel shows it (for a run whose processes say nothing of it: no preload,
// a native server): a process that watches the socket in an epoll set (Node, Go, Rust, nginx, asyncio), or
// one that waits in accept(2) on it (a blocking server). A socket only inherited, and never used, is neither.

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

/** The root and its descendants (/proc/PID/task/TID/children), at most MAX_PROCESSES. */
function descendants(root: number): number[] {
  const pids = [root];
  for (let index = 0; index < pids.length && pids.length < MAX_PROCESSES; index++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pids[index]}/task`);
    } catch {
      continue; // gone
    }
    for (const task of tasks) {
      const children = readSmallRegularFile(`/proc/${pids[index]}/task/${task}/children`, 65536) ?? '';
      for (const child of children.split(' ')) if (child !== '') pids.push(Number(child));
    }
  }
  return pids.slice(0, MAX_PROCESSES);
}

/** Inode numbers of a socket link (`socket:[123]`), else undefined. */
function socketInode(link: string): number | undefined {
  return link.startsWith('socket:[') ? Number(link.slice(8, -1)) : undefined;
}

/** The held inodes this process takes now: in its epoll sets' targets, or its accept(2) on one. */
function takenBy(pid: number, inodes: ReadonlySet<number>): number[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return []; // gone, or another user's
  }
  const taken = new Set<number>();
  const held = new Map<number, number>(); // fd → inode, for the accept(2) check
  for (const fd of fds.slice(0, MAX_FDS)) {
    let link: string;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = socketInode(link);
    if (inode !== undefined && inodes.has(inode)) held.set(Number(fd), inode);
    if (link !== 'anon_inode:[eventpoll]') continue;
    // One line per watched file: `tfd: 3 events: 19 data: … pos:0 ino:2a3b sdev:8`.
    const info = readSmallRegularFile(`/proc/${pid}/fdinfo/${fd}`, 65536) ?? '';
    for (const match of info.matchAll(/^tfd:.*\bino:([0-9a-f]+)/gm)) {
      const inode = parseInt(match[1], 16);
      if (inodes.has(inode)) taken.add(inode);
    }
  }
  // `NR arg0 …` while in a system call: accept(fd, …) on a held socket.
  const call = (readSmallRegularFile(`/proc/${pid}/syscall`, 512) ?? '').split(' ');
  const accepting = ACCEPT[process.arch]?.includes(Number(call[0])) && held.get(Number(call[1]));
  if (accepting) taken.add(accepting);
  return [...taken];
}

/** Which processes of `root`'s tree take one of these socket inodes now, each with the inode. */
export function socketTakers(root: number, inodes: ReadonlySet<number>): Array<{ pid: number; ino: number }> {
  return descendants(root).flatMap((pid) => takenBy(pid, inodes).map((ino) => ({ pid, ino })));
}
