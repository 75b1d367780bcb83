import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, uptime } from 'node:os';
import { closePidfd, openPidfd, releaseTerminal, signalPidfd, trimMalloc, widenSignalPipe } from './linux-native.js';
import { environValue } from './environ.js';
import { adoptOrphans, hasChildren, ownChildren, reapOne, reapZombies } from './linux-reaping.js';
import { openNotifySocket } from './notify-socket.js';
import { ownedTerminal } from './terminal.js';
import { onPath } from './which.js';
import { sendSignal, watchSigchld } from './signal.js';
import { isAlive, type Platform, type ProcessInfo, type SignalName } from './types.js';

// One buffer for every read: a /proc scan of thousands of processes must not
// allocate a Buffer per file (readFileSync also adds an fstat and a second read).
const buffer = Buffer.allocUnsafe(4096);
const YIELD_EVERY = 1024;

function readSmallFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined; // the process is gone
  }
  try {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.toString('latin1', 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Parses /proc/PID/stat. The command name (field 2) may hold spaces and ')'.
 * Only fields 3–6 and 22 are cut out (no split into 50 strings): a scan reads
 * this for every process on the machine.
 */
export function parseStat(pid: number, text: string): ProcessInfo | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const values: number[] = [];
  let state = '';
  let start = close + 2;
  // Fields after the name, from field 3 (state) to field 22 (starttime).
  for (let field = 3; field <= 22; field++) {
    const end = text.indexOf(' ', start);
    if (field === 3) state = text.slice(start, end);
    else if (field <= 6 || field === 22) values.push(Number(text.slice(start, end < 0 ? undefined : end)));
    if (end < 0) break;
    start = end + 1;
  }
  if (values.length < 4) return undefined;
  return {
    pid,
    state,
    ppid: values[0],
    pgid: values[1],
    sid: values[2],
    startTime: values[3],
    name: text.slice(text.indexOf('(') + 1, close),
  };
}

function readInfo(pid: number): ProcessInfo | undefined {
  const text = readSmallFile(`/proc/${pid}/stat`);
  return text === undefined ? undefined : parseStat(pid, text);
}

/** Is the process at `seen.pid` now the one seen (same start time), alive, and (for a group) still in its group? */
function stillThere(seen: ProcessInfo, group: boolean): boolean {
  const now = readInfo(seen.pid);
  return isAlive(now) && now.startTime === seen.startTime && (!group || now.pgid === seen.pgid);
}

/**
 * One signal through the process's identity: a pidfd opened first, then the
 * start time checked (if the pid now names the process seen, the pidfd is
 * its, and no later process can take it over); without pidfds, the start
 * time re-read immediately before kill(2). `group`: to the group it is in.
 */
function signalIdentity(seen: ProcessInfo, signal: SignalName, group: boolean): boolean {
  const pidfd = openPidfd(seen.pid);
  if (pidfd === -1) return false;
  if (pidfd === undefined) return stillThere(seen, group) && sendSignal(group ? -seen.pgid : seen.pid, signal);
  try {
    if (!stillThere(seen, group)) return false;
    // No group signal through a pidfd (before Linux 6.9): a member was just checked in it, so the id is its group's.
    return signalPidfd(pidfd, constants.signals[signal], group) ?? sendSignal(-seen.pgid, signal);
  } finally {
    closePidfd(pidfd);
  }
}

export const linuxPlatform: Platform = {
  spawnWithExeca: false,
  canSignal: true,
  async listProcesses() {
    const result: ProcessInfo[] = [];
    let sinceYield = 0;
    for (const entry of readdirSync('/proc')) {
      const code = entry.charCodeAt(0);
      if (code < 48 || code > 57) continue; // not a pid
      const info = readInfo(Number(entry));
      if (info) result.push(info);
      // A look at 10,000 processes takes a few hundred ms: let signals and exits through meanwhile.
      if (++sinceYield === YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return result;
  },
  async processInfo(pid) {
    return readInfo(pid);
  },
  startTimeNow() {
    // Start times are in clock ticks since boot; USER_HZ is 100 on every Linux.
    return Math.ceil(uptime() * 100);
  },
  commandLine(pid) {
    const text = readSmallFile(`/proc/${pid}/cmdline`);
    if (text) return text.replace(/\0+$/, '').split('\0').join(' ');
    // Kernel threads and zombies have an empty cmdline: fall back to the name.
    const stat = readSmallFile(`/proc/${pid}/stat`);
    const name = stat?.match(/\((.*)\)/)?.[1];
    return name ? `[${name}]` : '';
  },
  ownerMatches(pid) {
    // Real and effective uid both (the Uid line): a setuid program another user ran is not gsup's user.
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readSmallFile(`/proc/${pid}/status`) ?? '');
    const uid = process.geteuid!();
    return uids !== null && Number(uids[1]) === uid && Number(uids[2]) === uid;
  },
  environValue,
  handOverTerminal(expect) {
    const owned = ownedTerminal(0);
    if (!owned) return undefined;
    // util-linux's and busybox's setsid -c: setsid(), then TIOCSCTTY on stdin, then exec;
    // else gsup's own, run by node (a minimal or distroless image has no setsid).
    const setsid = onPath('setsid', process.env, '/');
    const wrapper = setsid ? [setsid, '-c'] : [process.execPath, join(dirname(fileURLToPath(import.meta.url)), 'exec-tty.cjs')];
    if (!setsid && !existsSync(wrapper[1])) return 'no setsid (util-linux or busybox) on PATH, and no exec-tty.cjs beside gsup';
    const why = releaseTerminal(0);
    if (why) return why;
    // Sent to the foreground group during the ioctl; they reach Node's handlers later.
    if (owned.foreground) for (const signal of ['SIGHUP', 'SIGCONT'] as const) expect(signal);
    return wrapper;
  },
  kill: sendSignal,
  signalProcesses(processes, signal) {
    let reached = 0;
    for (const info of processes) if (signalIdentity(info, signal, false)) reached++;
    return reached;
  },
  signalGroup(member, signal) {
    return member.pgid > 0 && signalIdentity(member, signal, true);
  },
  watchChildren: watchSigchld,
  adoptOrphans,
  reapOne,
  hasChildren,
  widenSignalPipe,
  trimMemory: trimMalloc,
  reapZombies,
  ownChildren,
  openNotifySocket,
};
