import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/gsup.js';

// The build's code cache (scripts/code-cache.cjs) of the inbox, the CLI and commander's bundle: taken
// by the Node that built it, loaded as bin/gsup.cjs loads them (`-t8s`: a form only commander reads).
describe('the code cache of dist/', () => {
  it('inbox.cjs, cli.cjs and flags.cjs each have one, and V8 takes each', () => {
    for (const name of ['inbox.cjs', 'cli.cjs', 'flags.cjs', 'cli.cjs.listen'])
      expect(existsSync(join(ROOT, 'dist', `${name}.cache`))).toBe(true);
    const script = `
      const { loadBundle, loadedBundles } = require(${JSON.stringify(join(ROOT, 'dist/code-cache.cjs'))});
      const { apart, listen } = loadBundle(${JSON.stringify(join(ROOT, 'dist/inbox.cjs'))}).exports;
      apart((carried) => {
        const inbox = listen(carried);
        loadBundle(${JSON.stringify(join(ROOT, 'dist/cli.cjs'))}).exports.main(['-t8s', '--', 'true'], inbox)
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

  it('a start with --listen takes the cache a start of its kind made (cli.cjs.listen.cache), and V8 takes it', () => {
    const script = `
      const { loadBundle } = require(${JSON.stringify(join(ROOT, 'dist/code-cache.cjs'))});
      loadBundle(${JSON.stringify(join(ROOT, 'dist/inbox.cjs'))});
      const cli = loadBundle(${JSON.stringify(join(ROOT, 'dist/cli.cjs'))}, 'listen');
      console.log(JSON.stringify([cli.script.cachedDataRejected]));`;
    const { NODE_OPTIONS: _, ...env } = process.env;
    expect(JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env }))).toEqual([false]);
  });
});

// What a plain start loads of Node's own modules: node:child_process brings net, stream and dgram (about 6 ms of
// a start); a run is spawned without it, and without libuv's process handle either (posix_spawn, where gsup reaps:
// spawnHere in src/engine/children/spawn.ts), and node:net comes only with --listen.
describe('the Node modules `gsup -- true` loads', () => {
  it('neither node:child_process, node:net, node:module nor an AbortController, and the run still ends with its status', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-modules-'));
    try {
      const hook = join(dir, 'hook.cjs');
      writeFileSync(
        hook,
        "process.on('exit', () => require('node:fs').writeSync(1, JSON.stringify(process.moduleLoadList) + '\\n'));\n",
      );
      const { NODE_OPTIONS: _, ...env } = process.env;
      const run = (args: string[]) =>
        execFileSync(process.execPath, ['--require', hook, join(ROOT, 'bin/gsup.cjs'), ...args], {
          encoding: 'utf8',
          env,
        });
      const loaded: string[] = JSON.parse(run(['--', 'true']));
      expect(loaded).not.toContain('Internal Binding process_wrap');
      // internal/abort_controller: Node's EventTarget, which the timers' end does without (shell/timers.ts).
      // module: node:module loads Node's ES module loader; the bundles take its Module from require.main
      // (scripts/build.js: loaderModule).
      for (const name of ['child_process', 'net', 'stream', 'dgram', 'internal/abort_controller', 'module'])
        expect(loaded).not.toContain(`NativeModule ${name}`);
      expect(() => run(['--', 'sh', '-c', 'exit 7'])).toThrow(expect.objectContaining({ status: 7 }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
