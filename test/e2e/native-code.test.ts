import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRINTER, ROOT, Run, tempDir } from '../helpers/gsup.js';

// Nothing around gsup can make it load foreign code.

describe('native code is loaded only from gsup’s package, never through a resolution that walks up', () => {
  const binary = `@koromix/koffi-${process.platform}-${process.arch}`;
  it.skipIf(!existsSync(join(ROOT, 'node_modules', binary)))(
    'a clone whose own binary is missing maps none: not one planted beside it, not one koffi’s resolution finds',
    async () => {
      const dir = tempDir();
      try {
        // A clone in a folder anyone may write to: gsup's files, koffi's loader but not its binary.
        const clone = join(dir.path, 'gsup');
        for (const part of ['bin', 'dist', 'package.json'])
          cpSync(join(ROOT, part), join(clone, part), { recursive: true });
        mkdirSync(join(clone, 'node_modules'));
        symlinkSync(join(ROOT, 'node_modules/koffi'), join(clone, 'node_modules/koffi'));
        const planted = join(dir.path, binary, `${process.platform}_${process.arch}`);
        mkdirSync(planted, { recursive: true });
        copyFileSync(
          join(ROOT, 'node_modules', binary, `${process.platform}_${process.arch}`, 'koffi.node'),
          join(planted, 'koffi.node'),
        );
        const run = new Run(process.execPath, [join(clone, 'bin/gsup.cjs'), '--', 'node', PRINTER]); // as subreaper: koffi is loaded before the spawn
        await run.ready();
        const maps = readFileSync(`/proc/${run.pid}/maps`, 'latin1');
        expect(maps).not.toContain(planted);
        // koffi's own loader, reached through the clone's node_modules/koffi, would find the real one (it resolves from its
        // real path, upwards): gsup never asks it. It runs without koffi, and says so (no subreaper, no pidfds).
        expect(maps).not.toContain(join(ROOT, 'node_modules', binary));
        expect(run.stderr.join('\n'), run.transcript()).toMatch(/koffi could not be loaded \(no koffi binary for /);
        run.signal('SIGTERM');
        expect((await run.finished()).code).toBe(0);
      } finally {
        dir.remove();
      }
    },
  );
});
