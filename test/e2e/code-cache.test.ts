import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/gsup.js';

// The build's code cache (scripts/code-cache.cjs) of the inbox, the CLI and commander's bundle: taken
// by the Node that built it, loaded as bin/gsup.cjs loads them.
describe('the code cache of dist/', () => {
  it('inbox.cjs, cli.cjs and flags.cjs each have one, and V8 takes each', () => {
    for (const name of ['inbox', 'cli', 'flags'])
      expect(existsSync(join(ROOT, 'dist', `${name}.cjs.cache`))).toBe(true);
    const script = `
      const { loadBundle, loadedBundles } = require(${JSON.stringify(join(ROOT, 'dist/code-cache.cjs'))});
      const { apart, listen } = loadBundle(${JSON.stringify(join(ROOT, 'dist/inbox.cjs'))}).exports;
      apart((carried) => {
        const inbox = listen(carried);
        loadBundle(${JSON.stringify(join(ROOT, 'dist/cli.cjs'))}).exports.main(['--stop-delay', '0', '--', 'true'], inbox)
          .then((code) => {
            console.log(JSON.stringify(loadedBundles.map((b) => [b.file.split('/').pop(), b.script.cachedDataRejected])));
            process.exit(code);
          });
      });`;
    const { NODE_OPTIONS: _, ...env } = process.env;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env });
    expect(JSON.parse(out)).toEqual([
      ['inbox.cjs', false],
      ['cli.cjs', false],
      ['flags.cjs', false],
    ]);
  });
});
