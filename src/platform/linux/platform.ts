import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { readProcFile } from './proc-read.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, uptime } from 'node:os';
import { checkPidfds, closePidfd, openPidfd, releaseTerminal, sendPidfd } from './native.js';
import { trimMalloc, widenSignalPipe } from './native.js';
import { environValue } from './environ.js';
import { sendMoment } from './moment.js';
import { processUser } from './credentials.js';
import { ownMemoryCgroup, readMemoryCgroup } from './cgroup.js';
import { adoptOrphans, askParentDeathSignal, hasChildren, ownChildren, reapOne, reapZombies } from './reaping.js';
import { openNotifySocket } from './notify-socket.js';
import { heldSocketCalls } from './sockets.js';
import { socketTakers } from './socket-takers.js';
import { ownedTerminal } from '../terminal.js';
import { onPath } from '../which.js';
import { sendSignal, watchSigchld } from '../kill.js';
import { isAlive, type ChildHandle, type Platform, type ProcessInfo, type SignalName } from '../types.js';

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
 * its, and no later process can take it over). Without pidfds, or when the
 * kernel refuses the send (no group signals before Linux 6.9, a seccomp
 * filter), the start time re-read immediately before kill(2). `group`: to
 * the group `seen` leads — only a leader's pidfd names its group.
 */
function signalIdentity(seen: ProcessInfo, signal: SignalName, group: boolean): boolean {
  if (group && (seen.pid !== seen.pgid || seen.pgid <= 0)) return false;
  const pidfd = openPidfd(seen.pid);
  if (pidfd === -1) return false;
  if (pidfd === undefined) return checkedKill(seen, signal, group);
  try {
    if (!stillThere(seen, group)) return false;
    const sent = sendPidfd(pidfd, constants.signals[signal], group);
    return sent === 'refused' ? checkedKill(seen, signal, group) : sent === 'sent';
  } finally {
    closePidfd(pidfd);
  }
}

function checkedKill(seen: ProcessInfo, signal: SignalName, group: boolean): boolean {
  return stillThere(seen, group) && sendSignal(group ? -seen.pgid : seen.pid, signal);
}

/** A child held since its spawn: its pidfd, while held (undefined without pidfds). */
interface HeldChild extends ChildHandle {
  pidfd: number | undefined;
}

/** gsup's own exec helper (exec-tty.ts), a bundle beside this one. */
const EXEC_HELPER = () => join(dirname(fileURLToPath(import.meta.url)), 'exec-tty.cjs');

// A util-linux or busybox setsid that knows -c says so in its usage (`-c, --ctty`, `[-c]`); an older busybox does not.
const CTTY_OPTION = /(^|[\s[,])-c\b/m;

/** Does this setsid(1) take -c (the terminal on stdin made the new session's)? Asked once, at start, by its usage. */
function takesCtty(setsid: string): boolean {
  const options = { encoding: 'latin1', timeout: 2000, stdio: 'pipe', env: { ...process.env, LC_ALL: 'C' } } as const;
  const usage = spawnSync(setsid, ['--help'], options);
  return CTTY_OPTION.test(`${usage.stdout ?? ''}\n${usage.stderr ?? ''}`);
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
  async readCommandLine(pid) {
    // undefined: gone (or not readable)
    const text = await readProcFile(`/proc/${pid}/cmdline`, 4096);
    return text && text.toString('latin1').replace(/\0+$/, '').split('\0').join(' ');
  },
  ownerMatches(pid) {
    // Real and effective uid both (the Uid line): a setuid program another user ran is not gsup's user.
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readSmallFile(`/proc/${pid}/status`) ?? '');
    const uid = process.geteuid!();
    return uids !== null && Number(uids[1]) === uid && Number(uids[2]) === uid;
  },
  environValue,
  processUser,
  handOverTerminal(expect) {
    const owned = ownedTerminal(0);
    if (!owned) return undefined;
    // util-linux's and busybox's setsid -c: setsid(), then TIOCSCTTY on stdin, then exec; else gsup's own,
    // run by node (a minimal or distroless image has no setsid, an old busybox's has no -c).
    const found = onPath('setsid', process.env, '/');
    const setsid = found && takesCtty(found) ? found : undefined;
    const wrapper = setsid ? [setsid, '-c'] : [process.execPath, EXEC_HELPER()];
    if (!setsid && !existsSync(wrapper[1])) return 'no setsid -c on PATH (util-linux, busybox), no exec-tty.cjs';
    const why = releaseTerminal(0);
    if (why) return why;
    // Sent to the foreground group during the ioctl; they reach Node's handlers later.
    if (owned.foreground) for (const signal of ['SIGHUP', 'SIGCONT'] as const) expect(signal);
    return wrapper;
  },
  kill: sendSignal,
  holdChild(pid) {
    const pidfd = openPidfd(pid);
    return { pid, pidfd: pidfd === undefined || pidfd === -1 ? undefined : pidfd } satisfies HeldChild;
  },
  signalChild(child, signal, group, byNumber) {
    const { pidfd } = child as HeldChild;
    if (pidfd !== undefined) {
      const sent = sendPidfd(pidfd, constants.signals[signal], group);
      if (sent !== 'refused') return sent === 'sent';
    }
    return byNumber && sendSignal(group ? -child.pid : child.pid, signal);
  },
  releaseChild(child) {
    const held = child as HeldChild;
    if (held.pidfd !== undefined) closePidfd(held.pidfd);
    held.pidfd = undefined;
  },
  checkIdentity() {
    const { problem, groups } = checkPidfds();
    const fallback = 'each signal is a kill(2) right after a look at its target';
    if (problem) return { problem: `no pidfds (${problem}): ${fallback}` };
    if (!groups)
      return { note: 'no group signal through a pidfd (Linux < 6.9): kill(2) right after a look at the leader' };
    return {};
  },
  signalProcesses(processes, signal) {
    let reached = 0;
    for (const info of processes) if (signalIdentity(info, signal, false)) reached++;
    return reached;
  },
  signalGroup(leader, signal) {
    return signalIdentity(leader, signal, true);
  },
  sendMoment,
  watchChildren: watchSigchld,
  adoptOrphans,
  askParentDeathSignal,
  reapOne,
  hasChildren,
  widenSignalPipe,
  trimMemory: trimMalloc,
  ownMemoryCgroup,
  readMemoryCgroup,
  reapZombies,
  ownChildren,
  openNotifySocket,
  sockets: heldSocketCalls,
  socketTakers,
  listenPidStep() {
    // $$ in `sh -c` is the shell's own pid, which `exec` hands to the command.
    if (existsSync('/bin/sh'))
      return { argv: ['/bin/sh', '-c', 'LISTEN_PID=$$; export LISTEN_PID; exec "$0" "$@"'], helper: false };
    const helper = EXEC_HELPER();
    return existsSync(helper) ? { argv: [process.execPath, helper], helper: true } : 'no /bin/sh, no exec-tty.cjs';
  },
};
