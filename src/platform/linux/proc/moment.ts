import { openSync, readSync } from 'node:fs';
import { uptime } from 'node:os';
import type { SendMoment } from '../../types.js';
import { readSmallFile } from './stat.js';

// The moment of a send as the kernel keeps it: the clock tick start times are counted in, and the last pid
// handed out. Read around each group send of a stop round, with pread on files kept open (no open, no Buffer per
// send).

const buffer = Buffer.allocUnsafe(64);
/** The files read at each send: open once; -1 where one cannot be read (ns_last_pid needs CHECKPOINT_RESTORE). */
const fds = new Map<string, number>();
let pidMax: number | undefined;

function readNumbers(path: string): string | undefined {
  let fd = fds.get(path);
  if (fd === undefined) {
    try {
      fd = openSync(path, 'r');
    } catch {
      fd = -1;
    }
    fds.set(path, fd);
  }
  if (fd === -1) return undefined;
  try {
    return buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0));
  } catch {
    return undefined;
  }
}

/**
 * /proc/uptime in hundredths of a second, cut down as the kernel cuts a
 * process's start time (USER_HZ is 100; time namespaces shift both alike).
 */
function tickNow(): number {
  const match = /^(\d+)\.(\d\d)/.exec(readNumbers('/proc/uptime') ?? '');
  // Whole seconds, cut down: a tick too early makes a process of the same tick a later one, never an earlier one.
  if (!match) return Math.floor(uptime()) * 100;
  return Number(match[1]) * 100 + Number(match[2]);
}

/** pid_max, read once: pids wrap around below it. */
function readPidMax(): number | undefined {
  const value = Number.parseInt(readSmallFile('/proc/sys/kernel/pid_max') ?? '', 10);
  return Number.isNaN(value) ? undefined : value;
}

export function sendMoment(): SendMoment {
  const tick = tickNow();
  const lastPid = Number.parseInt(readNumbers('/proc/sys/kernel/ns_last_pid') ?? '', 10);
  pidMax ??= readPidMax();
  return { tick, lastPid: Number.isNaN(lastPid) ? undefined : lastPid, pidMax };
}
