'use strict';
// Run by the build (scripts/build.js): one start of gsup as bin/gsup.cjs does
// it, `gsup [FLAG] -- node -e 0`, then V8's code cache of each bundle it
// loaded, written beside it (src/cli/code-cache.ts). `cli`: the inbox and the CLI;
// `flags`: with an option of gsup's own in a form only commander reads (`-t8s`: src/options/command-line.ts reads
// the plain ones), for commander's bundle (flags.cjs).
const { join } = require('node:path');
const { loadBundle, loadedBundles, writeCodeCache } = require('../dist/code-cache.cjs');

const which = process.argv[2];
// `listen`: the CLI's run holds a socket (GSUP_LISTEN; GSUP_VERBOSE=-1: the run's warning that no process took it is
// no news), so that a start with --listen finds its own path compiled (without, it compiled a sixth of its
// instructions anew). With the preload where gsup takes the package's own file as it is (then nothing is written:
// the file's checks and its NODE_OPTIONS come compiled too, ~1 ms of a start); elsewhere without it, so that a build
// writes nothing outside the package (root would write it under /run). No port free: a plain run.
const freePort = () =>
  new Promise((resolve) => {
    const server = require('node:net').createServer();
    server.once('error', () => resolve(undefined));
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
const dist = join(__dirname, '..', 'dist');
const flags = which === 'flags' ? ['-t8s'] : [];
// The listen start writes the CLI's cache of its kind (cli.cjs.listen.cache) alone: the inbox's is the plain one's.
const cached = which === 'flags' ? ['flags.cjs'] : which === 'listen' ? ['cli.cjs'] : ['inbox.cjs', 'cli.cjs'];
const kind = which === 'listen' ? 'listen' : undefined;
async function start() {
  const port = which === 'listen' ? await freePort() : undefined;
  const { apart, listen } = loadBundle(join(dist, 'inbox.cjs')).exports;
  const cli = loadBundle(join(dist, 'cli.cjs')).exports;
  if (port !== undefined)
    Object.assign(process.env, {
      GSUP_LISTEN: `127.0.0.1:${port}`,
      GSUP_VERBOSE: '-1',
      ...(!cli.packagedServes() && { GSUP_LISTEN_PRELOAD: '0' }),
    });
  apart((carried) => {
    const inbox = listen(carried);
    cli
      // No V8 flag changed (a start sets one a second in: cli.ts): a cache is taken only under the flags it was made
      // with.
      .main([...flags, '--', process.execPath, '-e', '0'], inbox, () => {})
      .then((code) => {
        for (const bundle of loadedBundles)
          if (cached.some((name) => bundle.file.endsWith(name))) writeCodeCache(bundle, kind);
        process.exit(code);
      });
  });
}

start();
