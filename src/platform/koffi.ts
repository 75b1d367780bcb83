import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * koffi's prebuilt binary, loaded straight away: koffi's own loader (which
 * finds the same binary, then wraps a few deprecated functions) costs about
 * 10 ms of gsup's start-up. Only from where npm puts it for gsup: gsup's own
 * node_modules, or the node_modules gsup itself is installed in; never a
 * path beside a clone (/tmp/@koromix/…: anyone may write there). Anything
 * else (musl, a nested install) goes through Node's module resolution.
 */
export function loadKoffi(moduleUrl: string): typeof import('koffi') {
  const require = createRequire(moduleUrl);
  const binary = `@koromix/koffi-${process.platform}-${process.arch}/${process.platform}_${process.arch}/koffi.node`;
  // The caller is dist/*.cjs (or dist/index.js) of the package: its folder's parent is gsup's.
  const packageDir = dirname(dirname(fileURLToPath(moduleUrl)));
  const places = [join(packageDir, 'node_modules', binary)];
  const parent = dirname(packageDir);
  // Installed as a dependency: node_modules/gsup or node_modules/@scope/gsup.
  const installedIn = basename(parent) === 'node_modules' ? parent : basename(dirname(parent)) === 'node_modules' && basename(parent).startsWith('@') ? dirname(parent) : undefined;
  if (installedIn) places.push(join(installedIn, binary));
  for (const path of places) {
    try {
      const native = require(path);
      if (typeof native.load === 'function' && typeof native.errno === 'function') return native;
    } catch {
      // not there, or not loadable here (musl)
    }
  }
  return require('koffi') as typeof import('koffi');
}

/** libc: glibc by name; else the symbols already loaded into node (musl and the rest). */
export function loadLibc(koffi: typeof import('koffi')): ReturnType<typeof koffi.load> {
  try {
    return koffi.load('libc.so.6');
  } catch {
    return koffi.load(null as unknown as string);
  }
}

// mallopt(M_ARENA_MAX, 1): one malloc arena for every thread. gsup allocates
// little, but glibc gives each of Node's threads (V8's GC helpers, libuv's
// pool) an arena of its own, whose freed pages it keeps: as PID 1 under churn
// that was a third of gsup's private memory (measured: bench/soak.js).
const M_ARENA_MAX = -8;

/** One arena from now on (threads that already have one keep it: PID 1 calls this first thing, see stop-handover.ts). */
export function limitMallocArenas(library: { func: (signature: string) => unknown }): void {
  try {
    (library.func('int mallopt(int, int)') as (option: number, value: number) => number)(M_ARENA_MAX, 1);
  } catch {
    // musl: no mallopt, and no per-thread arenas either
  }
}
