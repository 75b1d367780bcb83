import { closeSync, openSync, readSync } from 'node:fs';
import type { ProcessInfo } from '../../types.js';

// /proc/PID/stat, read and parsed from its bytes: a look reads it for every process on the machine, and the
// signal path for each target, so neither makes a string but the name.

// One buffer for every read: a /proc scan of thousands of processes must not
// allocate a Buffer per file (readFileSync also adds an fstat and a second read).
const buffer = Buffer.allocUnsafe(4096);
const SPACE = 32;

/** A small /proc file's text (`/proc/PID/status`), read into the one buffer; undefined when unreadable. */
export function readSmallFile(path: string): string | undefined {
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

const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const ZERO = 48;

/**
 * Parses /proc/PID/stat as read into `bytes`. The command name (field 2) may
 * hold spaces and ')'. Only fields 3–6 and 22 are taken, straight from the
 * bytes, and no string is made but the name: a scan reads this for every
 * process on the machine, and the signal path for each target.
 */
function parseStatBytes(pid: number, bytes: Buffer, length: number): ProcessInfo | undefined {
  const open = bytes.indexOf(OPEN_PAREN);
  const close = bytes.lastIndexOf(CLOSE_PAREN, length - 1);
  if (open < 0 || close < open || close + 2 >= length) return undefined;
  // One character, as V8 keeps every one-character string: none made.
  const state = String.fromCharCode(bytes[close + 2]);
  let ppid = 0;
  let pgid = 0;
  let sid = 0;
  let startTime = 0;
  let at = close + 4;
  // Fields after the state, from 4 (ppid) to 22 (starttime); those between are skipped.
  for (let field = 4; field <= 22; field++) {
    if (at >= length) return undefined;
    let value = 0;
    if (field <= 6 || field === 22) {
      for (let digit = bytes[at] - ZERO; digit >= 0 && digit <= 9 && at < length; digit = bytes[++at] - ZERO)
        value = value * 10 + digit;
      if (field === 4) ppid = value;
      else if (field === 5) pgid = value;
      else if (field === 6) sid = value;
      else startTime = value;
    }
    at = bytes.indexOf(SPACE, at);
    if (at < 0 || at >= length) {
      if (field < 22) return undefined;
      break;
    }
    at++;
  }
  return { pid, state, ppid, pgid, sid, startTime, name: bytes.toString('latin1', open + 1, close) };
}

/** Parses the text of /proc/PID/stat (see parseStatBytes). */
export function parseStat(pid: number, text: string): ProcessInfo | undefined {
  const bytes = Buffer.from(text, 'latin1');
  return parseStatBytes(pid, bytes, bytes.length);
}

/** The process at `pid` as its stat line says now; undefined when it is gone. */
export function readInfo(pid: number): ProcessInfo | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return undefined; // the process is gone
  }
  try {
    return parseStatBytes(pid, buffer, readSync(fd, buffer, 0, buffer.length, 0));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The group of a live process, from its stat read into the kept buffer, no string made; -1: gone or a zombie. */
export function liveGroup(pid: number): number {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return -1;
  }
  try {
    const bytes = buffer;
    const length = readSync(fd, bytes, 0, bytes.length, 0);
    // `pid (name) S ppid pgid …`: the name may hold anything, the last ')' ends it.
    let at = bytes.lastIndexOf(CLOSE_PAREN, length - 1);
    if (at < 0 || at + 2 >= length) return -1;
    const state = bytes[at + 2];
    if (state === 0x5a || state === 0x58) return -1; // Z, X
    at = bytes.indexOf(SPACE, at + 4) + 1; // past the ppid
    let pgid = 0;
    for (let digit = bytes[at] - ZERO; digit >= 0 && digit <= 9; digit = bytes[++at] - ZERO) pgid = pgid * 10 + digit;
    return at < length ? pgid : -1;
  } catch {
    return -1;
  } finally {
    closeSync(fd);
  }
}
