import { existsSync } from 'node:fs';
import { linuxPlatform } from './linux.js';
import { posixPlatform } from './posix.js';
import type { Platform } from './types.js';
import { windowsPlatform } from './windows.js';

export type { NotifySocket, Platform, ProcessInfo, ReapedChild, ReapResult, SignalName } from './types.js';
export { isAlive } from './types.js';

/**
 * The platform of this machine: /proc where there is one, `ps` on other POSIX
 * systems, pidtree and tree-kill on Windows. GSUP_PLATFORM=posix forces the
 * `ps` code path, so it can be tested on Linux.
 */
export function currentPlatform(): Platform {
  if (process.platform === 'win32') return windowsPlatform;
  if (process.env.GSUP_PLATFORM !== 'posix' && existsSync('/proc/self/stat')) return linuxPlatform;
  return posixPlatform;
}
