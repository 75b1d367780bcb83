#!/usr/bin/env node
// Memory a container pays, over time: gsup as PID 1 (unshare) under steady
// churn — ~100 short-lived orphans a second, a restart every ~11 s, 20
// forwarded signals a second — with its private memory (RssAnon) sampled
// every second. Reports the start, the plateau (the second half's maximum)
// and the second half's drift. In the table: 120 s (20 s with --quick).
//   node bench/soak.js [seconds]      (default 120)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { catches, childrenOf, statusMiB } from './lib/proc.js';
import { GSUP, exited, fixture, sleep } from './lib/spawn.js';
import { mib } from './lib/stats.js';

const SIGWINCH = 28;

export async function soak(durationS) {
  // SOAK_NODE_FLAGS: node's own flags for gsup (V8 heap sizing experiments), e.g. --max-semi-space-size=1.
  const flags = (process.env.SOAK_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    'unshare',
    [
      '--pid',
      '--fork',
      '--mount-proc',
      GSUP[0],
      ...flags,
      GSUP[1],
      '--restart',
      'always',
      '--restart-delay',
      '100ms',
      '--',
      'node',
      fixture('churn.js'),
    ],
    { stdio: ['ignore', 'ignore', process.env.SOAK_DEBUG ? 'inherit' : 'ignore'] },
  );
  let signals;
  let gsup;
  try {
    // gsup is unshare's child (PID 1 inside).
    for (let tries = 0; !gsup && tries < 100; tries++) {
      await sleep(50);
      gsup = childrenOf(child.pid)[0];
    }
    if (!gsup) throw new Error('gsup did not start under unshare');
    // Signals only once gsup handles them: from outside its namespace, an unhandled one would end it.
    while (!catches(gsup, SIGWINCH)) await sleep(20);
    signals = setInterval(() => process.kill(gsup, 'SIGWINCH'), 50);
    const samples = [];
    for (let second = 0; second < durationS; second++) {
      await sleep(1000);
      samples.push({ anon: statusMiB(gsup, 'RssAnon'), rss: statusMiB(gsup, 'VmRSS') });
    }
    clearInterval(signals);
    process.kill(gsup, 'SIGTERM');
    await exited(child);
    const half = samples.slice(Math.floor(samples.length / 2));
    const max = (list) => Math.max(...list.map((sample) => sample.anon));
    return {
      startMiB: samples[0].anon,
      plateauMiB: max(half),
      // A plateau: the second half's maximum no higher than the first half's (a heap that keeps growing sets a new one).
      growthMiB: max(half) - max(samples.slice(0, Math.floor(samples.length / 2))),
      driftMiB: half.at(-1).anon - half[0].anon,
      peakRssMiB: Math.max(...samples.map((sample) => sample.rss)),
      seconds: durationS,
    };
  } finally {
    clearInterval(signals);
    // On a failure: PID 1's SIGKILL ends its namespace, and everything in it.
    if (gsup && child.exitCode === null) process.kill(gsup, 'SIGKILL');
    child.kill('SIGKILL');
  }
}

const signed = (value) => `${value >= 0 ? '+' : ''}${mib(value)}`;

export default async function soakFigure({ quick, tools, row }) {
  const seconds = quick ? 20 : 120;
  if (!tools.unshare) return row({ id: 'soak', params: { seconds }, skipped: 'unshare not permitted' });
  const result = await soak(seconds);
  row({
    id: 'soak',
    params: { seconds },
    result: `plateau ${mib(result.plateauMiB)}, ${signed(result.growthMiB)} on the first half's maximum`,
    anchors: `${mib(result.startMiB)} at 1 s; peak RSS ${mib(result.peakRssMiB)}; ~100 orphans/s, a restart every ~11 s, 20 signals/s`,
    measured: { plateauMiB: result.plateauMiB, growthMiB: result.growthMiB },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await soak(Number(process.argv[2] ?? 120));
  console.log(
    `soak, ${result.seconds} s as PID 1 under churn: private memory (RssAnon) ${mib(result.startMiB)} at 1 s, ` +
      `plateau ${mib(result.plateauMiB)} (second half's maximum, ${signed(result.growthMiB)} on the first half's), ` +
      `drift over the second half ${signed(result.driftMiB)}; peak RSS ${mib(result.peakRssMiB)}`,
  );
}
