'use strict';
// Run by the build (scripts/build.js): one start of gsup as bin/gsup.cjs does
// it, `gsup [FLAG] -- node -e 0`, then V8's code cache of each bundle it
// loaded, written beside it (src/cli/code-cache.ts). `cli`: the inbox and the CLI;
// `flags`: with an option of gsup's own, for commander's bundle (flags.cjs).
const { join } = require('node:path');
const { loadBundle, loadedBundles, writeCodeCache } = require('../dist/code-cache.cjs');

const which = process.argv[2];
const dist = join(__dirname, '..', 'dist');
const flags = which === 'flags' ? ['--stop-delay', '0'] : [];
const cached = which === 'flags' ? ['flags.cjs'] : ['inbox.cjs', 'cli.cjs'];
const { apart, listen } = loadBundle(join(dist, 'inbox.cjs')).exports;
apart((carried) => {
  const inbox = listen(carried);
  loadBundle(join(dist, 'cli.cjs'))
    // No V8 flag changed (a start sets one a second in: cli.ts): a cache is taken only under the flags it was made with.
    .exports.main([...flags, '--', process.execPath, '-e', '0'], inbox, () => {})
    .then((code) => {
      for (const bundle of loadedBundles) if (cached.some((name) => bundle.file.endsWith(name))) writeCodeCache(bundle);
      process.exit(code);
    });
});
