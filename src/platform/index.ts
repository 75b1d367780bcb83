import { existsSync } from 'node:fs';
import { linuxPlatform } from './linux/platform.js';
import { posixPlatform } from './posix/platform.js';
import type { Platform } from './types.js';
import { windowsPlatform } from './windows/platform.js';

export type {
  ChildHandle,
  EnvironRead,
  GroupLeaver,
  NotifySocket,
  Platform,
  ProcessInfo,
  ProcessUser,
  ReapedChild,
  ReapResult,
  SendMoment,
  SignalName,
} from './types.js';
export type { BoundSocket, HandedSocket, HeldSocketCalls, ListenSpec } from './held-sockets.js';
export { isAlive } from './types.js';
export type { MemoryCgroup, OomReading } from './linux/proc/cgroup.js';

/**
 * The platform of this machine: /proc where there is one, `ps` on other POSIX
 * systems, pidtree and tree-kill on Windows. (Tests of the `ps` code path on
 * Linux pass `platform` to `supervise()`: no variable switches it.)
 */
export function currentPlatform(): Platform {
  if (process.platform === 'win32') return windowsPlatform;
  if (existsSync('/proc/self/stat')) return linuxPlatform;
  return posixPlatform;
}
