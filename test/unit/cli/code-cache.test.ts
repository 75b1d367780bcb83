import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBundle, wrapped, writeCodeCache } from '../../../src/cli/code-cache.js';
import { tempDir } from '../../helpers/gsup.js';

// dist/*.cjs with V8's code cache (src/cli/code-cache.ts): loaded as require() would, and a cache used only
// with the very source it was made from.
// Each load compiles: V8's in-process cache of compiled scripts (by name and text) would answer a second load of a
// file without reading its cached data, and `cachedDataRejected: false` would say nothing.
setFlagsFromString('--no-compilation-cache');
const dir = tempDir();
afterAll(() => dir.remove());

const bundle = (name: string, answer: number) => {
  const file = join(dir.path, name);
  writeFileSync(
    file,
    `exports.answer = () => ${answer};\nexports.where = [__filename, __dirname, typeof require('./near.cjs').near];\n`,
  );
  return file;
};
writeFileSync(join(dir.path, 'near.cjs'), 'exports.near = () => 1;\n');

/** A bundle as the build leaves it: loaded, its function run (compiled now: in the cache), its cache written. */
const built = (name: string, answer: number) => {
  const file = bundle(name, answer);
  const first = loadBundle(file);
  (first.exports.answer as () => number)();
  writeCodeCache(first);
  return file;
};

/** The file's time a second past its cache's: changed after the build. */
const later = (file: string) => {
  const made = statSync(`${file}.cache`).mtimeMs;
  utimesSync(file, new Date(made + 1000), new Date(made + 1000));
};

describe('a bundle with its code cache', () => {
  it('is loaded as require() would load it: its exports, __filename, __dirname, a require beside it', () => {
    const file = bundle('plain.cjs', 41);
    const loaded = loadBundle(file);
    expect((loaded.exports.answer as () => number)()).toBe(41);
    expect(loaded.exports.where).toEqual([file, dir.path, 'function']);
    expect(loaded.script.cachedDataRejected).toBeUndefined(); // no cache beside it: none given to V8
    // A require() of it from another bundle finds this very instance, as it would a required module.
    expect(createRequire(file)(file)).toBe(loaded.exports);
  });

  it("takes a bundle the build wrote in require()'s wrapper as it is, with its cache", () => {
    const file = join(dir.path, 'wrapped.cjs');
    writeFileSync(file, wrapped('exports.answer = () => 44;\nexports.where = [__filename, module.id];'));
    const first = loadBundle(file);
    expect((first.exports.answer as () => number)()).toBe(44);
    expect(first.exports.where).toEqual([file, file]);
    writeCodeCache(first);
    const again = loadBundle(file);
    expect(again.script.cachedDataRejected).toBe(false);
    expect((again.exports.answer as () => number)()).toBe(44);
  });

  it('reads UTF-8 where the text is not ASCII', () => {
    const file = join(dir.path, 'text.cjs');
    writeFileSync(file, "exports.word = 'café';\n");
    expect(loadBundle(file).exports.word).toBe('café');
  });

  it('takes the cache written after a start; one made for another source of the same length is not given to V8', () => {
    const file = built('cached.cjs', 42);
    const again = loadBundle(file);
    expect(again.script.cachedDataRejected).toBe(false);
    expect((again.exports.answer as () => number)()).toBe(42);
    bundle('cached.cjs', 43); // the same length: V8 alone would take the old cache
    later(file); // edited after the build (within a timestamp's tick, the next test's case)
    const changed = loadBundle(file);
    expect(changed.script.cachedDataRejected).toBeUndefined();
    expect((changed.exports.answer as () => number)()).toBe(43);
  });

  it("compiles the cache's own copy of the source where the bundle is not newer and of its size: what ran is what was cached", () => {
    const file = built('rule.cjs', 50);
    bundle('rule.cjs', 51);
    // Not newer than its cache, as npm leaves both (one time for all; a millisecond before: utimes rounds a Date).
    const made = statSync(`${file}.cache`).mtimeMs / 1000 - 0.001;
    utimesSync(file, made, made);
    const same = loadBundle(file);
    expect(same.script.cachedDataRejected).toBe(false);
    expect((same.exports.answer as () => number)()).toBe(50);
    expect(same.source.toString()).toContain('=> 50');
    // Not newer, but not the copy's size (an edit, then a copy or a pack that gave all files one time): its bytes.
    bundle('rule.cjs', 512);
    utimesSync(file, made, made);
    const edited = loadBundle(file);
    expect(edited.script.cachedDataRejected).toBeUndefined();
    expect((edited.exports.answer as () => number)()).toBe(512);
  });

  it('takes a cache older than its bundle (copied first) when its copy is the bundle, byte for byte', () => {
    const file = built('copied.cjs', 60);
    later(file);
    const copied = loadBundle(file);
    expect(copied.script.cachedDataRejected).toBe(false);
    expect((copied.exports.answer as () => number)()).toBe(60);
  });
});
