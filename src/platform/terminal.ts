import { fstatSync } from 'node:fs';

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
