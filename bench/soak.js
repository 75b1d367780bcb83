#!/usr/bin/env node
// Memory a container pays, over time: gsup as PID 1 (unshare) under steady
// churn — ~100 short-lived orphans a second, a restart every ~11 s, 20
// forwarded signals a second — with its private memory (RssAnon) sampled
// every second. Prints the start, the plateau (the second half's maximum)
// and the second half's drift.
//   node bench/soak.js [seconds]      (default 120)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const seconds = Number(process.argv[2] ?? 120);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const kib = (pid, field) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? NaN);

export async function soak(durationS = seconds) {
  // SOAK_NODE_FLAGS: node's own flags for gsup (V8 heap sizing experiments), e.g. --max-semi-space-size=1.
  const flags = (process.env.SOAK_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    'unshare',
    [
      '--pid',
      '--fork',
      '--mount-proc',
      process.execPath,
      ...flags,
      `${ROOT}bin/gsup.cjs`,
      '--restart',
      'always',
      '--restart-delay',
      '100ms',
      '--',
      'node',
      `${ROOT}fixtures/churn.js`,
    ],
    {
      stdio: ['ignore', 'ignore', process.env.SOAK_DEBUG ? 'inherit' : 'ignore'],
    },
  );
  // gsup is unshare's child (PID 1 inside).
  let gsup;
  for (let tries = 0; !gsup && tries < 100; tries++) {
    await sleep(50);
    const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'latin1').trim();
    gsup = children ? Number(children.split(' ')[0]) : undefined;
  }
  // Signals only once gsup handles them (its SigCgt has SIGWINCH): from outside its namespace, an unhandled one would end it.
  const caught = () =>
    (BigInt(`0x${/SigCgt:\s+([0-9a-f]+)/.exec(readFileSync(`/proc/${gsup}/status`, 'latin1'))[1]}`) >> 27n) & 1n;
  while (!caught()) await sleep(20);
  const signals = setInterval(() => process.kill(gsup, 'SIGWINCH'), 50);
  const samples = [];
  for (let second = 0; second < durationS; second++) {
    await sleep(1000);
    samples.push({ anon: kib(gsup, 'RssAnon') / 1024, rss: kib(gsup, 'VmRSS') / 1024 });
  }
  clearInterval(signals);
  process.kill(gsup, 'SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
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
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await soak();
  console.log(
    `soak, ${result.seconds} s as PID 1 under churn: private memory (RssAnon) ${result.startMiB.toFixed(1)} MiB at 1 s, plateau ${result.plateauMiB.toFixed(1)} MiB (second half's maximum, ${result.growthMiB >= 0 ? '+' : ''}${result.growthMiB.toFixed(1)} MiB on the first half's), drift over the second half ${result.driftMiB >= 0 ? '+' : ''}${result.driftMiB.toFixed(1)} MiB; peak RSS ${result.peakRssMiB.toFixed(1)} MiB`,
  );
}
