import { childProcess, moduleFile } from '../builtins.js';
import { close, existsSync, open, read, readdirSync } from 'node:fs';
import { readInfo, readSmallFile } from './proc/stat.js';
import { dirname, join } from 'node:path';
import { constants, uptime } from 'node:os';
import { checkPidfds, closePidfd, openPidfd, releaseTerminal, sendPidfd } from './native.js';
import { trimMalloc, widenSignalPipe } from './native.js';
import { catchRealTimeSignals } from './process/real-time.js';
import { environValue } from './proc/environ.js';
import { sendMoment } from './proc/moment.js';
import { leftGroup } from './proc/leavers.js';
import { processUser, signalDenied } from './proc/credentials.js';
import { ownMemoryCgroup, readMemoryCgroup } from './proc/cgroup.js';
import {
  adoptOrphans,
  askParentDeathSignal,
  childOutside,
  hasChildren,
  ownChildren,
  reapOne,
  reapZombies,
} from './process/reaping.js';
import { libcCalls, quickExit } from './process/quick-exit.js';
import { posixSpawn } from './process/posix-spawn.js';
import { openNotifySocket } from './sockets/notify-socket.js';
import { heldSocketCalls } from './sockets/sockets.js';
import { socketTakers } from './sockets/socket-takers.js';
import { ownedTerminal } from '../terminal.js';
import { onPath } from '../which.js';
import { sendSignal, watchSigchld } from '../kill.js';
import { isAlive, type ChildHandle, type Platform, type ProcessInfo, type SignalName } from '../types.js';

const YIELD_EVERY = 1024;
// Command lines are read (off the loop, a few at once) into buffers kept for it: this many bytes of each.
const LINE_BYTES = 4096;
const lineBuffers: Buffer[] = [];
const SPACE = 32;

/** The first bytes of a /proc file, read off the loop into `buffer`: how many, or undefined when unreadable. */
function readInto(path: string, buffer: Buffer): Promise<number | undefined> {
  return new Promise((resolve) =>
    open(path, 'r', (error, fd) => {
      if (error) return resolve(undefined);
      read(fd, buffer, 0, buffer.length, 0, (failed, length) => close(fd, () => resolve(failed ? undefined : length)));
    }),
  );
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
const EXEC_HELPER = () => join(dirname(moduleFile(import.meta.url)), 'exec-tty.cjs');

// A util-linux or busybox setsid that knows -c says so in its usage (`-c, --ctty`, `[-c]`); an older busybox does not.
const CTTY_OPTION = /(^|[\s[,])-c\b/m;

/** Does this setsid(1) take -c (the terminal on stdin made the new session's)? Asked once, at start, by its usage. */
function takesCtty(setsid: string): boolean {
  const options = { encoding: 'latin1', timeout: 2000, stdio: 'pipe', env: { ...process.env, LC_ALL: 'C' } } as const;
  const usage = childProcess().spawnSync(setsid, ['--help'], options);
  return CTTY_OPTION.test(`${usage.stdout ?? ''}\n${usage.stderr ?? ''}`);
}

export const linuxPlatform: Platform = {
  spawnWithExeca: false,
  canSignal: true,
  async listProcesses() {
    const result: ProcessInfo[] = [];
    let sinceYield = 0;
    const entries = readdirSync('/proc');
    // Indexed: for…of makes an iterator result per entry where this async function is not optimized.
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index];
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
    const buffer = lineBuffers.pop() ?? Buffer.allocUnsafe(LINE_BYTES);
    try {
      let end = await readInto(`/proc/${pid}/cmdline`, buffer);
      if (end === undefined) return undefined;
      // The arguments end in NULs and are joined by them: spaces instead, in place.
      while (end > 0 && buffer[end - 1] === 0) end--;
      for (let at = buffer.indexOf(0); at >= 0 && at < end; at = buffer.indexOf(0, at + 1)) buffer[at] = SPACE;
      return buffer.toString('latin1', 0, end);
    } finally {
      lineBuffers.push(buffer);
    }
  },
  ownerMatches(pid) {
    // Real and effective uid both (the Uid line): a setuid program another user ran is not gsup's user.
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readSmallFile(`/proc/${pid}/status`) ?? '');
    const uid = process.geteuid!();
    return uids !== null && Number(uids[1]) === uid && Number(uids[2]) === uid;
  },
  environValue,
  processUser,
  signalDenied,
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
  leftGroup,
  watchChildren: watchSigchld,
  adoptOrphans,
  askParentDeathSignal,
  reapOne,
  hasChildren,
  widenSignalPipe,
  catchRealTimeSignals,
  trimMemory: trimMalloc,
  quickExit: () => quickExit(libcCalls()),
  ownMemoryCgroup,
  readMemoryCgroup,
  reapZombies,
  spawnProcess: posixSpawn,
  ownChildren,
  childOutside,
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
