import { constants } from 'node:os';
import { isAlive, type GroupLeaver, type ProcessInfo, type SignalName } from '../../types.js';
import { readInfo, readSmallFile } from './stat.js';

// Right after a group send: which of the members planned for it are outside the group now (they left it with
// setsid or setpgid, before the send or after), and what their status says of the signal. /proc/PID/stat and
// /proc/PID/status never wait on the process's memory (unlike cmdline and environ): each read is bounded.

/** Members read after one group send; past this, the rest count as planned (a group that large is rare). */
const LEAVERS_READ_MAX = 1024;

/** One signal's bit in a mask of /proc/PID/status (hex; signal N at bit N-1). */
function maskHas(status: string, name: string, signal: number): boolean {
  const at = status.indexOf(`\n${name}:\t`);
  if (at < 0) return false;
  const start = at + name.length + 3;
  const end = status.indexOf('\n', start);
  const hex = status.slice(start, end < 0 ? undefined : end).trim();
  // Signals 1–31 are in the last eight hex digits.
  const low = Number.parseInt(hex.slice(-8), 16);
  return Number.isFinite(low) && ((low >>> (signal - 1)) & 1) === 1;
}

/** The signal in a process's status: pending (for a thread or the whole process), blocked, ignored, caught. */
export function signalState(status: string, signal: number): GroupLeaver['signal'] {
  return {
    pending: maskHas(status, 'SigPnd', signal) || maskHas(status, 'ShdPnd', signal),
    blocked: maskHas(status, 'SigBlk', signal),
    ignored: maskHas(status, 'SigIgn', signal),
    caught: maskHas(status, 'SigCgt', signal),
  };
}

export function leftGroup(members: readonly ProcessInfo[], pgid: number, signal: SignalName): GroupLeaver[] {
  const leavers: GroupLeaver[] = [];
  const number = constants.signals[signal];
  const count = Math.min(members.length, LEAVERS_READ_MAX);
  for (let index = 0; index < count; index++) {
    const planned = members[index];
    const now = readInfo(planned.pid);
    // Gone, a zombie, or its pid another process's by now: nothing left to send to.
    if (!isAlive(now) || now.startTime !== planned.startTime || now.pgid === pgid) continue;
    const status = readSmallFile(`/proc/${planned.pid}/status`);
    leavers.push({
      info: planned,
      pgid: now.pgid,
      signal: status === undefined ? undefined : signalState(status, number),
    });
  }
  return leavers;
}
