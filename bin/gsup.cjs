#!/usr/bin/env node
'use strict';
// First of all, before any module of gsup's loads: every signal gsup forwards (or reloads on) is caught and held,
// so that none in these milliseconds ends gsup by its default action (a SIGHUP: 129). The inbox takes them over,
// in order (src/cli/inbox.ts). SIGTERM and SIGINT are left to Node's start-up handler until the inbox hands them
// over (stop-handover.ts); SIGKILL, SIGSTOP and SIGCHLD are none of these (src/platform/signals.ts:
// forwardableSignals). What is left is Node's own start-up, before this line (docs/limits.md).
const early = { held: [], taken: false };
const hold = (signal) => early.taken || early.held.push(signal);
const byNumber = new Map();
for (const [name, number] of Object.entries(require('node:os').constants.signals))
  if (number <= 31 && !byNumber.has(number)) byNumber.set(number, name);
const NOT_EARLY = new Set(['SIGKILL', 'SIGSTOP', 'SIGCHLD', 'SIGTERM', 'SIGINT']);
for (const name of byNumber.values()) if (!NOT_EARLY.has(name)) process.on(name, hold);
// Then gsup leaves the app's NODE_OPTIONS behind (when set, Node starts again without them, same pid: the
// handlers above go with the old image), and the inbox listens for every catchable signal (as PID 1 an unhandled
// signal is ignored, and a stop signal must never be lost). Each bundle comes with the code cache the build made.
const { join } = require('node:path');
const { loadBundle } = require('../dist/code-cache.cjs');
const dist = join(__dirname, '..', 'dist');
const { apart, listen } = loadBundle(join(dist, 'inbox.cjs')).exports;
// A start with --listen (or GSUP_LISTEN) takes the cache a start of its kind made (src/cli/code-cache.ts).
// Only gsup's own options count: those before `--` (the command's own may say --listen too).
const own = process.argv.slice(2, process.argv.includes('--') ? process.argv.indexOf('--') : undefined);
const listens = !!process.env.GSUP_LISTEN || own.some((arg) => arg === '--listen' || arg.startsWith('--listen='));
apart((carried) => {
  const inbox = listen(carried, early);
  const cli = loadBundle(join(dist, 'cli.cjs'), listens ? 'listen' : undefined).exports;
  cli.main(process.argv.slice(2), inbox).then(cli.end);
});
