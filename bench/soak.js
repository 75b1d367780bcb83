#!/usr/bin/env node
// Memory a container pays, over time: gsup as PID 1 (unshare) under steady
// churn (fixtures/churn.sh) — ~100 short-lived orphans a second, a restart
// every ~11 s, a forwarded SIGHUP every 50 ms — with its private memory
// (RssAnon) sampled every 100 ms, often enough to catch the top of each saw
// tooth (V8 frees old-generation garbage in steps). Reports the peak (the
// highest sample of the whole run), the plateau (the second half's median, and
// its range) and whether it grows (the second half's maximum against the
// first half's). Twice: the orphans in the command's group (its group's
// signal reaches them: no look at the tree), then half of them daemons in
// sessions of their own (roots only a look finds: each forwarded signal takes
// one, and each new orphan's environment is read for the runs' mark).
// In the table: 300 s each (20 s with --quick).
//   node bench/soak.js [seconds] [--daemons]      (default 300)
// SOAK_NODE_FLAGS: node's own flags for gsup (V8 experiments, --trace-gc, a --require'd probe:
// bench/lib/alloc-probe.cjs); SOAK_DEBUG=1: gsup's stderr (and what the flags print) on this terminal;
// SOAK_SAMPLES=FILE: every sample (seconds, RssAnon and VmRSS in MiB) written there.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { catches, childrenOf, statusMiB } from './lib/proc.js';
import { GSUP, fixture, lines, sleep } from './lib/spawn.js';
import { median, mib } from './lib/stats.js';

const SIGHUP = 1;
const SIGNAL_EVERY_MS = 50;
export const SAMPLE_EVERY_MS = 100;

export async function soak(durationS, { daemons = false } = {}) {
  const flags = (process.env.SOAK_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const debug = process.env.SOAK_DEBUG ? 'inherit' : 'ignore';
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
      'sh',
      fixture('churn.sh'),
    ],
    { stdio: ['ignore', 'pipe', debug], env: { ...process.env, CHURN_DAEMONS: daemons ? '1' : '0' } },
  );
  // What the command says: one `ready` a run, and how many orphans it started when it ends.
  const churn = { runs: 0, orphans: 0 };
  lines(child, (line) => {
    if (line.startsWith('ready')) churn.runs++;
    else if (line.startsWith('churned ')) churn.orphans += Number(line.slice('churned '.length)) || 0;
    else if (debug === 'inherit') process.stdout.write(`${line}\n`);
  });
  let signals;
  let gsup;
  let sent = 0;
  try {
    // gsup is unshare's child (PID 1 inside).
    for (let tries = 0; !gsup && tries < 100; tries++) {
      await sleep(50);
      gsup = childrenOf(child.pid)[0];
    }
    if (!gsup) throw new Error('gsup did not start under unshare');
    // Signals only once gsup handles them: from outside its namespace, an unhandled one would end it.
    while (!catches(gsup, SIGHUP)) await sleep(20);
    const started = Date.now();
    signals = setInterval(() => (process.kill(gsup, 'SIGHUP'), sent++), SIGNAL_EVERY_MS);
    const samples = [];
    for (let next = started + SAMPLE_EVERY_MS; next <= started + durationS * 1000; next += SAMPLE_EVERY_MS) {
      await sleep(Math.max(0, next - Date.now()));
      const anon = statusMiB(gsup, 'RssAnon');
      if (Number.isNaN(anon)) throw new Error('gsup ended during the soak');
      samples.push({ at: (Date.now() - started) / 1000, anon, rss: statusMiB(gsup, 'VmRSS') });
    }
    clearInterval(signals);
    const elapsedS = (Date.now() - started) / 1000;
    process.kill(gsup, 'SIGTERM');
    // 'close': the command's last words (how many it started) read to the end.
    await new Promise((resolve) => (child.stdout.readableEnded ? resolve() : child.once('close', resolve)));
    if (process.env.SOAK_SAMPLES)
      writeFileSync(process.env.SOAK_SAMPLES, samples.map((s) => `${s.at} ${s.anon} ${s.rss}\n`).join(''));
    const anon = samples.map((sample) => sample.anon);
    const middle = Math.floor(anon.length / 2);
    const first = anon.slice(0, middle);
    const second = anon.slice(middle);
    const peak = samples.reduce((top, sample) => (sample.anon > top.anon ? sample : top));
    const startAt = samples.find((sample) => sample.at >= 1) ?? samples[0];
    return {
      startMiB: startAt.anon,
      peakMiB: peak.anon,
      peakAtS: peak.at,
      plateauMiB: median(second),
      lowMiB: Math.min(...second),
      highMiB: Math.max(...second),
      // Flat: the second half's maximum no higher than the first half's (a heap that keeps growing sets a new one).
      growthMiB: Math.max(...second) - Math.max(...first),
      peakRssMiB: Math.max(...samples.map((sample) => sample.rss)),
      seconds: durationS,
      samples: samples.length,
      signalsPerS: sent / elapsedS,
      orphansPerS: churn.orphans / elapsedS,
      restartEveryS: churn.runs > 1 ? elapsedS / (churn.runs - 1) : NaN,
    };
  } finally {
    clearInterval(signals);
    // On a failure: PID 1's SIGKILL ends its namespace, and everything in it.
    if (gsup && child.exitCode === null) process.kill(gsup, 'SIGKILL');
    child.kill('SIGKILL');
  }
}

const signed = (value) => `${value >= 0 ? '+' : ''}${mib(value)}`;
const churnWords = (result) =>
  `~${Math.round(result.orphansPerS)} orphans/s, a restart every ~${Math.round(result.restartEveryS)} s, ` +
  `${Math.round(result.signalsPerS)} SIGHUP/s`;

export default async function soakFigure({ quick, tools, row }) {
  const seconds = quick ? 20 : 300;
  for (const [id, daemons] of [
    ['soak', false],
    ['soak-daemons', true],
  ]) {
    if (!tools.unshare) {
      row({ id, params: { seconds }, skipped: 'unshare not permitted' });
      continue;
    }
    const result = await soak(seconds, { daemons });
    row({
      id,
      params: { seconds },
      result:
        `peak ${mib(result.peakMiB)}; plateau ${mib(result.plateauMiB)} ` +
        `(${mib(result.lowMiB)}–${mib(result.highMiB)}), ${signed(result.growthMiB)} on the first half's maximum`,
      anchors:
        `${mib(result.startMiB)} at 1 s; sampled every ${SAMPLE_EVERY_MS} ms; peak RSS ${mib(result.peakRssMiB)}; ` +
        churnWords(result),
      measured: { peakMiB: result.peakMiB, growthMiB: result.growthMiB },
    });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const daemons = process.argv.includes('--daemons');
  const seconds = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 300);
  const result = await soak(seconds, { daemons });
  console.log(
    `soak, ${result.seconds} s as PID 1 under churn (${churnWords(result)}${daemons ? ', half of them daemons' : ''}): ` +
      `private memory (RssAnon), ${result.samples} samples ${SAMPLE_EVERY_MS} ms apart: ${mib(result.startMiB)} at 1 s, ` +
      `peak ${mib(result.peakMiB)} at ${result.peakAtS.toFixed(1)} s, ` +
      `plateau ${mib(result.plateauMiB)} (the second half's median; ${mib(result.lowMiB)}–${mib(result.highMiB)}), ` +
      `${signed(result.growthMiB)} on the first half's maximum; peak RSS ${mib(result.peakRssMiB)}`,
  );
}
