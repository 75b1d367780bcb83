// Idle: gsup's CPU while it supervises `sleep N` (start-up excluded: from 1 s
// on), and its memory beside the naive forwarder's, with and without
// --status-port, and beside tini's and dumb-init's where they are installed.
// RssAnon is the private part: what a container pays beside a Node app, whose
// node binary pages it shares.
import { spawn } from 'node:child_process';
import { cpuMs, statusMiB } from './lib/proc.js';
import { GSUP, NAIVE, exited, sleep } from './lib/spawn.js';
import { mib, ms } from './lib/stats.js';

export default async function idle({ quick, tools, row }) {
  const seconds = quick ? 10 : 30;
  const port = 40000 + (process.pid % 1000);
  const sleeping = ['sleep', String(seconds)];
  const gsup = spawn(GSUP[0], [GSUP[1], '--', ...sleeping], { stdio: 'ignore' });
  const naive = spawn(NAIVE[0], [NAIVE[1], ...sleeping], { stdio: 'ignore' });
  const served = spawn(
    GSUP[0],
    [GSUP[1], '--status-port', String(port), '--status-host', '127.0.0.1', '--', ...sleeping],
    { stdio: 'ignore' },
  );
  // C inits, for scale (tini -s: a subreaper, as it would be anywhere but PID 1).
  const inits = {};
  if (tools.tini) inits.tini = spawn('tini', ['-s', '--', ...sleeping], { stdio: 'ignore' });
  if (tools.dumbInit) inits['dumb-init'] = spawn('dumb-init', sleeping, { stdio: 'ignore' });
  await sleep(1000);
  const start = cpuMs(gsup.pid);
  await sleep((seconds - 1.5) * 1000);
  const used = cpuMs(gsup.pid) - start;
  const memory = (child) => ({ rss: statusMiB(child.pid, 'VmRSS'), anon: statusMiB(child.pid, 'RssAnon') });
  const [own, floor, withPort] = [memory(gsup), memory(naive), memory(served)];
  const others = Object.entries(inits).map(([name, child]) => [name, memory(child)]);
  await Promise.all([exited(gsup), exited(naive), exited(served), ...Object.values(inits).map(exited)]);
  row({
    id: 'idle-cpu',
    params: { seconds },
    result: ms(used),
    anchors: `start-up itself ${ms(start)}`,
    measured: { cpuMs: used },
  });
  const against = (memory) =>
    `${mib(memory.rss)} = ${(memory.rss / floor.rss).toFixed(2)}× naive (private ${mib(memory.anon)})`;
  row({
    id: 'idle-rss',
    result: against(own),
    anchors: [['naive forwarder', floor], ...others]
      .map(([name, memory]) => `${name} ${mib(memory.rss)} (private ${mib(memory.anon)})`)
      .join(', '),
    measured: { ratio: own.rss / floor.rss },
  });
  row({ id: 'idle-rss-served', result: against(withPort), measured: { ratio: withPort.rss / floor.rss } });
}
