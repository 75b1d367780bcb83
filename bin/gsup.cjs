#!/usr/bin/env node
'use strict';
// First, before anything else loads: gsup leaves the app's NODE_OPTIONS behind
// (when set, Node starts again without them, same pid), then a handler for every
// catchable signal (as PID 1 an unhandled signal is ignored, and a stop signal
// must never be lost). Each bundle comes with the code cache the build made for it.
const { join } = require('node:path');
const { loadBundle } = require('../dist/code-cache.cjs');
const dist = join(__dirname, '..', 'dist');
const { apart, listen } = loadBundle(join(dist, 'inbox.cjs')).exports;
apart((carried) => {
  const inbox = listen(carried);
  loadBundle(join(dist, 'cli.cjs'))
    .exports.main(process.argv.slice(2), inbox)
    .then((code) => process.exit(code));
});
