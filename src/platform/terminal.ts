import { fstatSync, readFileSync } from 'node:fs';

/**
 * Is this fd a terminal? A pipe or a file (containers, CI) — and on Linux any
 * character device that is not a terminal, such as /dev/null — is answered
 * without loading node:tty, which costs several ms of start-up.
 */
export async function isTerminal(fd: number): Promise<boolean> {
  try {
    const stat = fstatSync(fd);
    if (!stat.isCharacterDevice()) return false;
    // Linux terminal majors: 4 (tty, console), 5 (/dev/tty, ptmx), 136-143 (pts).
    const major = Math.floor(stat.rdev / 256) & 0xfff;
    if (process.platform === 'linux' && major !== 4 && major !== 5 && (major < 136 || major > 143)) return false;
  } catch {
    return false;
  }
  return (await import('node:tty')).isatty(fd);
}

/**
 * Linux: does gsup lead the session whose controlling terminal is the one on
 * `fd` (`docker run -it`, a login, `script`)? Then also whether gsup's group
 * is the terminal's foreground group (the one giving the terminal up signals).
 * Undefined when not: a shell's job, no terminal, another terminal.
 */
export function ownedTerminal(fd: number): { foreground: boolean } | undefined {
  let fields: number[];
  let rdev: number;
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // After the name: state ppid pgrp session tty_nr tpgid ...
    fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ', 6)
      .slice(1)
      .map(Number);
    rdev = fstatSync(fd).rdev;
  } catch {
    return undefined;
  }
  const [, pgrp, session, ttyNumber, foregroundGroup] = fields;
  // Both encode the device as (minor & 0xff) | major << 8 | (minor & ~0xff) << 12.
  if (session !== process.pid || ttyNumber === 0 || ttyNumber !== rdev) return undefined;
  return { foreground: foregroundGroup === pgrp };
}
