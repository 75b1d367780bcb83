import { readProcFile } from './proc-read.js';
import { readSmallFile } from './stat.js';
import type { ProcessUser } from '../../types.js';

// The Uid and Gid lines sit near the top of /proc/PID/status.
const STATUS_BYTES = 4096;

/**
 * The user and group a process runs as (/proc/PID/status, readable for any
 * process), read asynchronously. Undefined when it is gone, or when its real
 * and effective ids differ (a setuid program: whose user would it be?).
 */
export async function processUser(pid: number): Promise<ProcessUser | undefined> {
  const text = (await readProcFile(`/proc/${pid}/status`, STATUS_BYTES))?.toString('latin1') ?? '';
  const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(text);
  const gids = /^Gid:\s+(\d+)\s+(\d+)/m.exec(text);
  if (!uids || !gids || uids[1] !== uids[2] || gids[1] !== gids[2]) return undefined;
  return { uid: Number(uids[1]), gid: Number(gids[1]) };
}

const CAP_KILL = 5n;
// Whether gsup may signal any process (read once): its own user namespace's answer never changes.
let anyone: boolean | undefined;

/**
 * gsup may not signal this process (kill(2)'s EPERM for signal 0, which sends nothing). Asked only where gsup may
 * not signal everyone: CAP_KILL in its effective set, in the first user namespace (its own maps every uid), answers
 * for every process at once. Where the pid was taken again since the look, the judgment is on a process gone: moot.
 */
export function signalDenied(pid: number): boolean {
  anyone ??= mayKillAnyone();
  if (anyone) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function mayKillAnyone(): boolean {
  const capEff = /^CapEff:\s+([0-9a-f]+)/m.exec(readSmallFile('/proc/self/status') ?? '')?.[1];
  const kill = capEff !== undefined && (BigInt(`0x${capEff}`) >> CAP_KILL) & 1n;
  return kill === 1n && /^\s*0\s+0\s+4294967295\s*$/m.test(readSmallFile('/proc/self/uid_map') ?? '');
}
