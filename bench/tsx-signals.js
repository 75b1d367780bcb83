#!/usr/bin/env node
// `npx tsx app.ts` under each supervisor as PID 1 (unshare --pid, as in a
// container): SIGTERM to PID 1, then how many SIGTERMs the app printed and
// whether its cleanup (500 ms, fixtures/app.ts) finished before the PID
// namespace ended. Idle, then with every core busy. The figures of
// docs/comparison.md's `npx tsx` row; not part of `npm run bench`.
//   node bench/tsx-signals.js [TRIES]      (default 15 idle + 15 loaded)
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { childrenOf } from './lib/proc.js';
import { GSUP, ROOT, has, lineWhere, sleep, unshareWorks } from './lib/spawn.js';

const tries = Number(process.argv[2] ?? 15);
const SUPERVISORS = {
  gsup: [...GSUP, '--'],
  ...(has('tini') ? { tini: ['tini', '--'], 'tini -g': ['tini', '-g', '--'] } : {}),
  ...(has('dumb-init') ? { 'dumb-init': ['dumb-init'] } : {}),
};
const APP = ['npx', 'tsx', 'fixtures/app.ts', '--cleanup', '500'];

async function once(supervisor) {
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', ...supervisor, ...APP], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const printed = [];
  child.stdout.on('data', (chunk) => printed.push(chunk));
  const closed = new Promise((resolve) => child.once('close', resolve));
  await lineWhere(child, (line) => line.startsWith('ready (pid'));
  // PID 1 of the namespace: unshare's child.
  for (let waited = 0; childrenOf(child.pid).length === 0 && waited < 1000; waited += 10) await sleep(10);
  process.kill(childrenOf(child.pid)[0], 'SIGTERM');
  await closed;
  const text = printed.join('');
  return { terms: (text.match(/^signal: SIGTERM/gm) ?? []).length, cleaned: /^clean exit/m.test(text) };
}

async function round(label) {
  for (const [name, supervisor] of Object.entries(SUPERVISORS)) {
    const results = [];
    for (let index = 0; index < tries; index++) results.push(await once(supervisor));
    const count = (test) => results.filter(test).length;
    console.log(
      `${label}, ${name}: one SIGTERM ${count((r) => r.terms === 1)} of ${tries}, two or more ` +
        `${count((r) => r.terms > 1)}, none ${count((r) => r.terms === 0)}; cleanup finished ` +
        `${count((r) => r.cleaned)} of ${tries}`,
    );
  }
}

if (!unshareWorks()) {
  console.error('tsx-signals: unshare --pid is not permitted here');
  process.exit(1);
}
await round('idle');
const hogs = Array.from({ length: availableParallelism() * 2 }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
try {
  await round('every core busy');
} finally {
  for (const hog of hogs) hog.kill('SIGKILL');
}
