import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type * as Vm from 'node:vm';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadBundle, writeCodeCache } from '../../../src/cli/code-cache.js';
import { tempDir } from '../../helpers/gsup.js';

// What loadBundle hands V8 as cached data: V8 copies data that is not 8-byte aligned before it reads it.
const given: (Buffer | undefined)[] = [];
vi.mock('node:vm', async (original) => {
  const vm = await original<typeof Vm>();
  class Script extends vm.Script {
    constructor(code: string, options?: Vm.ScriptOptions) {
      given.push(options?.cachedData as Buffer | undefined);
      super(code, options);
    }
  }
  return { ...vm, Script };
});

// Each load compiles: V8's in-process cache of compiled scripts would answer a second load of a file without
// reading its cached data (code-cache.test.ts).
setFlagsFromString('--no-compilation-cache');
const dir = tempDir();
afterAll(() => dir.remove());

describe("a bundle's code cache", () => {
  it('is handed to V8 at an 8-byte aligned address, whatever the length of the source before it', () => {
    for (let pad = 0; pad < 8; pad++) {
      const file = join(dir.path, `aligned-${pad}.cjs`);
      writeFileSync(file, `exports.answer = () => ${'1'.repeat(pad + 1)};\n`);
      writeCodeCache(loadBundle(file));
      given.length = 0;
      const again = loadBundle(file);
      expect(again.script.cachedDataRejected).toBe(false);
      expect((again.exports.answer as () => number)()).toBe(Number('1'.repeat(pad + 1)));
      const [data] = given;
      expect(data).toBeDefined();
      // These files are small: slices of Node's shared pool, whose offsets Node keeps 8-aligned (a large file's
      // bytes start at their own allocation's start).
      expect(data!.byteOffset % 8).toBe(0);
    }
  });
});
