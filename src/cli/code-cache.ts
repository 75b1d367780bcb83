import { isAscii } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
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
 * This file is a bundle of its own (dist/code-cache.cjs), the first that
 * bin/gsup.cjs loads; each bundle it loads goes into require's cache, so
 * that a require() of it from another bundle finds this very instance.
 */
export interface Bundle {
  readonly file: string;
  readonly exports: Record<string, unknown>;
  readonly script: Script;
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
// The cache file: the source's length (4 bytes), the source, then V8's data.
const LENGTH_BYTES = 4;

/** Every bundle loaded so far, for the build to write their caches after a start (scripts/code-cache.cjs). */
export const loadedBundles: Bundle[] = [];

/**
 * `kind`: which start's cache (`NAME.cjs.KIND.cache`): a start with --listen runs code a plain one does not, and a
 * cache holds what the start that made it compiled (scripts/code-cache.cjs makes one of each).
 */
export function loadBundle(file: string, kind?: string): Bundle {
  const source = readFileSync(file);
  // The build escapes what is not ASCII (scripts/build.js): latin1 is then the same text, read faster.
  const text = source.toString(isAscii(source) ? 'latin1' : 'utf8');
  // No cache of that kind (a build that could not make it): the plain start's serves all the same.
  const cachedData =
    cacheFor(cacheFile(file, kind), source) ?? (kind ? cacheFor(cacheFile(file, undefined), source) : undefined);
  const script = new Script(text.startsWith(WRAP[0]) ? text : wrapped(text), { filename: file, cachedData });
  const require = createRequire(file);
  // A bundle this one requires that is loaded already (the CLI's `./inbox.cjs`): its exports, without the
  // resolution a require() does first (a stat and a realpath, ~0.7 ms of a start).
  const loaded = (id: string) => loadedBundles.find((bundle) => bundle.file === join(dirname(file), id));
  const bundleRequire = Object.assign(
    (id: string) => (id.startsWith('./') && loaded(id)?.exports) || require(id),
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
  const bundle = { file, exports: module.exports, script, source };
  loadedBundles.push(bundle);
  return bundle;
}

function cacheFile(file: string, kind: string | undefined): string {
  return kind === undefined ? `${file}.cache` : `${file}.${kind}.cache`;
}

function cacheFor(path: string, source: Buffer): Buffer | undefined {
  let cache: Buffer;
  try {
    cache = readFileSync(path);
  } catch {
    return undefined; // none built (Windows, a build that could not run gsup): compiled as usual
  }
  if (cache.length < LENGTH_BYTES || cache.readUInt32LE(0) !== source.length) return undefined;
  const made = cache.subarray(LENGTH_BYTES, LENGTH_BYTES + source.length);
  return made.equals(source) ? cache.subarray(LENGTH_BYTES + source.length) : undefined;
}

/** The build's: after a start has run, what V8 compiled for the bundle, with the source it is for. */
export function writeCodeCache(bundle: Bundle, kind?: string): void {
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32LE(bundle.source.length);
  const data = Buffer.concat([length, bundle.source, bundle.script.createCachedData()]);
  writeFileSync(cacheFile(bundle.file, kind), data);
}
