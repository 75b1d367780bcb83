import { readProcFile } from './proc-read.js';
import type { ProcessUser } from '../types.js';

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
