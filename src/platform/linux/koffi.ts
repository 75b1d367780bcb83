import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { moduleFile } from '../builtins.js';

/** koffi's name for this CPU's ABI: the folder of its binary (`linux_x64`, `musl_arm64`). */
function abiOf(arch: string): string {
  // Hard-float 32-bit ARM and RISC-V with doubles: the builds koffi ships for those CPUs.
  return arch === 'arm' ? 'armhf' : arch === 'riscv64' ? 'riscv64d' : arch;
}

/** The ELF interpreter named in an executable's first bytes (`/lib/ld-musl-x86_64.so.1`), if found there. */
export function interpreterOf(head: Buffer): string | undefined {
  if (head.length < 64 || head.readUInt32BE(0) !== 0x7f454c46 || head[5] !== 1) return undefined; // ELF, little-endian
  const wide = head[4] === 2;
  const table = wide ? Number(head.readBigUInt64LE(32)) : head.readUInt32LE(28);
  const size = head.readUInt16LE(wide ? 54 : 42);
  const count = head.readUInt16LE(wide ? 56 : 44);
  for (let index = 0; index < count; index++) {
    const at = table + index * size;
    if (at + size > head.length) return undefined;
    if (head.readUInt32LE(at) !== 3) continue; // PT_INTERP
    const offset = wide ? Number(head.readBigUInt64LE(at + 8)) : head.readUInt32LE(at + 4);
    const length = wide ? Number(head.readBigUInt64LE(at + 32)) : head.readUInt32LE(at + 16);
    if (offset + length > head.length) return undefined;
    return head.toString('latin1', offset, offset + length).replace(/\0+$/, '');
  }
  return undefined;
}

/** The C library node runs on: musl when its interpreter is musl's (Alpine), else glibc; undefined when unknown. */
export function libcOf(executable: string): 'glibc' | 'musl' | undefined {
  const head = Buffer.alloc(4096);
  let fd: number | undefined;
  try {
    fd = openSync(executable, 'r');
    const interpreter = interpreterOf(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
    return interpreter === undefined ? undefined : basename(interpreter).startsWith('ld-musl-') ? 'musl' : 'glibc';
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Where koffi's prebuilt binary may be, best first, and nowhere else: in
 * gsup's own node_modules, or the node_modules gsup is installed in (where
 * npm puts gsup's dependencies). Never a resolution that walks up into a
 * parent node_modules, nor a path beside a clone (/tmp/@koromix/…: anyone
 * may write there). The package for the platform holds a glibc and a musl
 * build (`linux_x64`, `musl_x64`): the one for node's C library first.
 */
export function koffiPlaces(moduleUrl: string, platform: string, arch: string, libc?: 'glibc' | 'musl'): string[] {
  const here = dirname(moduleFile(moduleUrl));
  // The caller is dist/*.cjs (or dist/index.js) of the package, or a file of its src/ run from source (the tests),
  // at any depth of its rooms (src/cli/, src/platform/linux/process/…).
  let source = here;
  for (let up = 0; up < 4 && basename(source) !== 'src'; up++) source = dirname(source);
  const fromSource = basename(here) !== 'dist' && basename(source) === 'src';
  const packageDir = fromSource ? dirname(source) : dirname(here);
  const roots = [join(packageDir, 'node_modules')];
  const parent = dirname(packageDir);
  // Installed as a dependency: node_modules/gsup or node_modules/@scope/gsup.
  const scoped = basename(parent).startsWith('@') && basename(dirname(parent)) === 'node_modules';
  if (basename(parent) === 'node_modules') roots.push(parent);
  else if (scoped) roots.push(dirname(parent));
  const abi = abiOf(arch);
  const builds = [`${platform}_${abi}`];
  if (platform === 'linux') builds[libc === 'musl' ? 'unshift' : 'push'](`musl_${abi}`);
  const binary = `@koromix/koffi-${platform}-${arch}`;
  return roots.flatMap((root) => builds.map((build) => join(root, binary, build, 'koffi.node')));
}

/**
 * koffi's prebuilt binary, loaded straight away from one of `koffiPlaces`:
 * koffi's own loader (which finds the same binary, then wraps a few
 * deprecated functions) costs about 10 ms of gsup's start-up, and it falls
 * back to `require('@koromix/…')`, which walks every parent node_modules.
 * Throws when none loads.
 */
export function loadKoffi(moduleUrl: string): typeof import('koffi') {
  const require = createRequire(moduleFile(moduleUrl));
  const libc = process.platform === 'linux' ? libcOf(process.execPath) : undefined;
  const places = koffiPlaces(moduleUrl, process.platform, process.arch, libc);
  let failure: unknown;
  for (const path of places) {
    try {
      const native = require(path);
      if (typeof native.load === 'function' && typeof native.errno === 'function') return native;
    } catch (error) {
      // not there, or not loadable here (the other C library's build)
      if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') failure ??= error;
    }
  }
  const why = failure instanceof Error ? `: ${failure.message.split('\n')[0]}` : '';
  throw new Error(`no koffi binary for ${process.platform}-${process.arch} in gsup's package (${places[0]})${why}`);
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

/**
 * One arena from now on (threads that already have one keep it: PID 1 calls this first thing, see
 * stop-handover.ts).
 */
export function limitMallocArenas(library: { func: (signature: string) => unknown }): void {
  try {
    (library.func('int mallopt(int, int)') as (option: number, value: number) => number)(M_ARENA_MAX, 1);
  } catch {
    // musl: no mallopt, and no per-thread arenas either
  }
}
