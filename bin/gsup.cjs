#!/usr/bin/env node
'use strict';
// First, before anything else loads: gsup leaves the app's NODE_OPTIONS behind
// (when set, Node starts again without them, same pid), then a handler for every
// catchable signal (as PID 1 an unhandled signal is ignored, and a stop signal
// must never be lost). The CLI comes with the code cache the build made for it.
const { apart, listen, loadBundle } = require('../dist/inbox.cjs');
apart((carried) => {
  const inbox = listen(carried);
  loadBundle(require('node:path').join(__dirname, '..', 'dist', 'cli.cjs'))
    .exports.main(process.argv.slice(2), inbox)
    .then((code) => process.exit(code));
});
