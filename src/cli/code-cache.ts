import { isAscii } from 'node:buffer';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/**
 * gsup's own CommonJS bundles (dist/NAME.cjs) loaded as require() would,
 * with V8's code cache the build wrote beside each (NAME.cjs.cache, see
 * scripts/code-cache.cjs): what a start runs comes compiled, a third of
 * gsup's own start-up otherwise. A cache is used only with the very source
 * it was made from (V8 checks no more than its length), and a Node whose V8
 * or flags differ rejects it: the bundle is then compiled as require() does.
 * The cache holds that source, and a start compiles the cache's own copy
 * where the bundle's file is not newer and of the copy's size (Python's rule
 * for its .pyc, with make's order: the build writes the bundle, then its
 * cache; npm gives both one time). Otherwise (an edit, a copy that wrote the
 * bundle last) the bundle's bytes must match the copy. A start so reads the
 * bundle's text once, not twice, and compares nothing (~1 ms).
 * This file is a bundle of its own (dist/code-cache.cjs), the first that
 * bin/gsup.cjs loads; each bundle it loads goes into require's cache, so
 * that a require() of it from another bundle finds this very instance.
 */
export interface Bundle {
  readonly file: string;
  readonly exports: Record<string, unknown>;
  readonly script: Script;
  /** The bytes the script was compiled from. */
  readonly source: Buffer;
}

const WRAP = ['(function (exports, require, module, __filename, __dirname) { ', '\n});'];

/**
 * A bundle's text as the build writes it: already in require()'s wrapper, so that a start compiles the file's
 * text as it reads it (a copy of it less, ~0.7 ms). Only loadBundle() loads such a file.
 */
export function wrapped(text: string): string {
  return `${WRAP[0]}${text}${WRAP[1]}`;
}
// The cache file: the source's length (4 bytes), the source, zeros up to a multiple of 8, then V8's data. V8 copies
// cached data that is not 8-byte aligned before it reads it (300 KB of the CLI's, ~1 ms of fresh pages a start).
const LENGTH_BYTES = 4;
const ALIGN = 8;
const dataOffset = (sourceLength: number) => Math.ceil((LENGTH_BYTES + sourceLength) / ALIGN) * ALIGN;

/** Every bundle loaded so far, for the build to write their caches after a start (scripts/code-cache.cjs). */
export const loadedBundles: Bundle[] = [];

/**
 * `kind`: which start's cache (`NAME.cjs.KIND.cache`): a start with --listen runs code a plain one does not, and a
 * cache holds what the start that made it compiled (scripts/code-cache.cjs makes one of each).
 */
export function loadBundle(file: string, kind?: string): Bundle {
  const onDisk = statSync(file);
  let read: Buffer | undefined;
  const bundled = () => (read ??= readFileSync(file));
  // No cache of that kind (a build that could not make it): the plain start's serves all the same.
  const cached =
    cacheFor(cacheFile(file, kind), onDisk, bundled) ??
    (kind ? cacheFor(cacheFile(file, undefined), onDisk, bundled) : undefined);
  const source = cached?.source ?? bundled();
  const cachedData = cached?.data;
  // The build escapes what is not ASCII (scripts/build.js): latin1 is then the same text, read faster.
  const encoding = isAscii(source) ? 'latin1' : 'utf8';
  const text = source.toString(encoding);
  const script = new Script(text.startsWith(WRAP[0]) ? text : wrapped(text), { filename: file, cachedData });
  const require = createRequire(file);
  // A bundle this one requires that is loaded already (the CLI's `./inbox.cjs`): its exports, without the
  // resolution a require() does first (a stat and a realpath, ~0.7 ms of a start).
  const loaded = (id: string) => loadedBundles.find((bundle) => bundle.file === join(dirname(file), id));
  // Node's own modules once each: the bundle asks for node:fs once per module of gsup's that imports it (~70 asks).
  const builtins = new Map<string, unknown>();
  const builtin = (id: string) => builtins.get(id) ?? builtins.set(id, require(id)).get(id);
  const bundleRequire = Object.assign(
    (id: string) =>
      (id.startsWith('./') && loaded(id)?.exports) || (id.startsWith('node:') ? builtin(id) : require(id)),
    require,
  );
  const module = {
    id: file,
    filename: file,
    loaded: false,
    exports: {} as Record<string, unknown>,
    children: [],
    paths: [],
  };
  script.runInThisContext()(module.exports, bundleRequire, module, file, dirname(file));
  module.loaded = true;
  require.cache[file] = module as unknown as NodeJS.Module;
  // The bytes again only when asked (the build's writeCodeCache): the script keeps its text, and a start keeps no
  // copy of it, nor the cache it may have come from.
  const bundle = {
    file,
    exports: module.exports,
    script,
    get source() {
      return Buffer.from(text, encoding);
    },
  };
  loadedBundles.push(bundle);
  return bundle;
}

function cacheFile(file: string, kind: string | undefined): string {
  return kind === undefined ? `${file}.cache` : `${file}.${kind}.cache`;
}

/**
 * The cache at `path` and the source it was made from, when that is the bundle's: the cache is not older than the
 * bundle's file and the copy is of its size, or the copy matches the bundle's bytes. Undefined when there is none, or
 * another's.
 */
function cacheFor(
  path: string,
  onDisk: { mtimeMs: number; size: number },
  bundled: () => Buffer,
): { source: Buffer; data: Buffer } | undefined {
  let cache: Buffer;
  let made: number;
  try {
    made = statSync(path).mtimeMs;
    cache = readFileSync(path);
  } catch {
    return undefined; // none built (Windows, a build that could not run gsup): compiled as usual
  }
  if (cache.length < LENGTH_BYTES) return undefined;
  const length = cache.readUInt32LE(0);
  const start = dataOffset(length);
  if (start >= cache.length) return undefined;
  const source = cache.subarray(LENGTH_BYTES, LENGTH_BYTES + length);
  const same = (made >= onDisk.mtimeMs && source.length === onDisk.size) || source.equals(bundled());
  return same ? { source, data: cache.subarray(start) } : undefined;
}

/** The build's: after a start has run, what V8 compiled for the bundle, with the source it is for. */
export function writeCodeCache(bundle: Bundle, kind?: string): void {
  const { source } = bundle;
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32LE(source.length);
  const padding = Buffer.alloc(dataOffset(source.length) - LENGTH_BYTES - source.length);
  const data = Buffer.concat([length, source, padding, bundle.script.createCachedData()]);
  writeFileSync(cacheFile(bundle.file, kind), data);
}
