import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { adoptOrphans, ownChildren, reapZombies } from './linux-native.js';
import { sendSignal, watchSigchld } from './signal.js';
import type { Platform, ProcessInfo } from './types.js';

// One buffer for every read: a /proc scan of thousands of processes must not
// allocate a Buffer per file (readFileSync also adds an fstat and a second read).
const buffer = Buffer.allocUnsafe(4096);

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

/** Parses /proc/PID/stat. The command name (field 2) may hold spaces and ')'. */
export function parseStat(pid: number, text: string): ProcessInfo | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const name = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 of proc(5): state, ppid, pgrp, session, ..., starttime (22)
  return {
    pid,
    state: fields[0],
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    startTime: Number(fields[19]),
    name,
  };
}

function readInfo(pid: number): ProcessInfo | undefined {
  const text = readSmallFile(`/proc/${pid}/stat`);
  return text === undefined ? undefined : parseStat(pid, text);
}

export const linuxPlatform: Platform = {
  name: 'linux',
  canSignal: true,
  async listProcesses() {
    const result: ProcessInfo[] = [];
    for (const entry of readdirSync('/proc')) {
      const code = entry.charCodeAt(0);
      if (code < 48 || code > 57) continue; // not a pid
      const info = readInfo(Number(entry));
      if (info) result.push(info);
    }
    return result;
  },
  async processInfo(pid) {
    return readInfo(pid);
  },
  commandLine(pid) {
    const text = readSmallFile(`/proc/${pid}/cmdline`);
    if (text) return text.replace(/\0+$/, '').split('\0').join(' ');
    // Kernel threads and zombies have an empty cmdline: fall back to the name.
    const stat = readSmallFile(`/proc/${pid}/stat`);
    const name = stat?.match(/\((.*)\)/)?.[1];
    return name ? `[${name}]` : '';
  },
  signalPending(pid, signal) {
    const text = readSmallFile(`/proc/${pid}/status`);
    if (!text) return false;
    const bit = 1n << BigInt(constants.signals[signal] - 1);
    for (const field of ['SigPnd:', 'ShdPnd:']) {
      const start = text.indexOf(field);
      if (start >= 0 && (BigInt(`0x${text.slice(start + field.length, text.indexOf('\n', start)).trim()}`) & bit) !== 0n) return true;
    }
    return false;
  },
  ownerMatches(pid) {
    try {
      return statSync(`/proc/${pid}`).uid === process.getuid!();
    } catch {
      return false;
    }
  },
  kill: sendSignal,
  watchChildren: watchSigchld,
  adoptOrphans,
  reapZombies,
  ownChildren,
};
