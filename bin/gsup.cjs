#!/usr/bin/env node
'use strict';
// First, before anything else loads: a handler for every catchable signal
// (as PID 1 an unhandled signal is ignored, and a stop signal must never be lost).
const inbox = require('../dist/inbox.cjs').listen();
require('../dist/cli.cjs')
  .main(process.argv.slice(2), inbox)
  .then((code) => process.exit(code));
