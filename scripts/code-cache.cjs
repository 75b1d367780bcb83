'use strict';
// Run by the build (scripts/build.js): one start of gsup as bin/gsup.cjs does
// it, `gsup [FLAG] -- node -e 0`, then V8's code cache of each bundle it
// loaded, written beside it (src/code-cache.ts). `flags`: with an option of
// gsup's own, so that commander's bundle (flags.cjs) is loaded and cached too.
const { join } = require('node:path');
const { apart, listen, loadBundle, loadedBundles, writeCodeCache } = require('../dist/inbox.cjs');

const which = process.argv[2];
const flags = which === 'flags' ? ['--stop-delay', '0'] : [];
apart((carried) => {
  const inbox = listen(carried);
  loadBundle(join(__dirname, '..', 'dist', 'cli.cjs'))
    // No V8 flag changed (a start sets one a second in: cli.ts): a cache is taken only under the flags it was made with.
    .exports.main([...flags, '--', process.execPath, '-e', '0'], inbox, () => {})
    .then((code) => {
      for (const bundle of loadedBundles) if (bundle.file.endsWith(`${which}.cjs`)) writeCodeCache(bundle);
      process.exit(code);
    });
});
