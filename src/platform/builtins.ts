import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// Node modules loaded on first use, not at start: node:child_process brings net, stream and dgram along (about
// 6 ms of every start, a twentieth of `node -e 0`), and `gsup -- cmd` needs none of them (its runs are spawned by
// engine/children/spawn.ts: directSpawn); node:net only under --listen.

// A plain path (`/usr/lib/node_modules/gsup/dist/cli.cjs`, pnpm's `…/.pnpm/gsup@1.0.0/…`: characters
// pathToFileURL leaves as they are): the CommonJS bundles write their __filename's URL as `file://` and it
// (scripts/build.js's banner has this rule as text: a unit test holds the two alike), read back here without
// node:url's URL, whose first use costs ~0.5 ms of a start.
export const PLAIN_PATH = /^\/[\w./@+-]*$/;

/** The file of a module's URL (import.meta.url). */
export function moduleFile(url: string): string {
  const path = url.startsWith('file://') ? url.slice('file://'.length) : undefined;
  return path !== undefined && PLAIN_PATH.test(path) ? path : fileURLToPath(url);
}

// Made on first use too: a require of its own costs about 0.3 ms of every start.
let require: NodeJS.Require | undefined;
const load = (id: string): unknown => (require ??= createRequire(moduleFile(import.meta.url)))(id);
let loadedChildProcess: typeof import('node:child_process') | undefined;
let loadedNet: typeof import('node:net') | undefined;

export function childProcess(): typeof import('node:child_process') {
  return (loadedChildProcess ??= load('node:child_process') as typeof import('node:child_process'));
}

export function net(): typeof import('node:net') {
  return (loadedNet ??= load('node:net') as typeof import('node:net'));
}

/** Whether this is Node's main thread, where signals (SIGCHLD) reach: node:worker_threads (~3 ms), on first ask. */
export function mainThread(): boolean {
  return (load('node:worker_threads') as typeof import('node:worker_threads')).isMainThread;
}

/**
 * Node's internal binding `name` (process.binding), or undefined: it stays quiet under --pending-deprecation
 * (DEP0111), where the app's own use of it still warns.
 */
export function binding(name: string): Record<string, unknown> | undefined {
  const quiet = process as unknown as { binding?: (name: string) => Record<string, unknown>; noDeprecation?: boolean };
  const noDeprecation = quiet.noDeprecation;
  try {
    quiet.noDeprecation = true;
    return quiet.binding?.(name);
  } catch {
    return undefined;
  } finally {
    quiet.noDeprecation = noDeprecation;
  }
}
