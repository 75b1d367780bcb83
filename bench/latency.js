// Forwarding latency: SIGWINCH to the supervisor → its arrival in a
// grandchild behind `sh -c '...; true'` (fixtures/latency.js prints the
// arrival time). The chains run side by side and take turns signal by
// signal, so that all of them see the same machine from moment to moment.
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { GSUP, NAIVE, exited, fixture, lines, sleep } from './lib/spawn.js';
import { median, ms, percentile } from './lib/stats.js';

/** A supervisor with the fixture behind it, once the fixture is ready. */
async function startChain(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const chain = { child, arrivals: [], waiter: undefined };
  const ready = new Promise((resolve) => (chain.ready = resolve));
  lines(child, (line) => {
    if (line === 'ready') chain.ready();
    else chain.waiter?.(BigInt(line));
  });
  await ready;
  return chain;
}

async function takeTurns(chains, count) {
  await sleep(200);
  for (let index = 0; index < count; index++) {
    for (const chain of chains) {
      const arrived = new Promise((resolve) => (chain.waiter = resolve));
      const sent = process.hrtime.bigint();
      process.kill(chain.child.pid, 'SIGWINCH');
      chain.arrivals.push(Number((await arrived) - sent) / 1e6);
      await sleep(2);
    }
  }
  return chains.map((chain) => ({ median: median(chain.arrivals), p99: percentile(chain.arrivals, 99) }));
}

export default async function latency({ quick, tools, row }) {
  const signals = quick ? 200 : 500;
  const shell = ['sh', '-c', `node ${fixture('latency.js')}; true`];
  const statusPort = 39000 + (process.pid % 1000);
  const listenPort = 40000 + (process.pid % 1000);
  const commands = [
    [GSUP[0], [GSUP[1], '--', ...shell]],
    [NAIVE[0], [NAIVE[1], ...shell]],
    // The orchestrator's view on, and a client scraping /metrics every 100 ms meanwhile.
    [GSUP[0], [GSUP[1], '--status-port', String(statusPort), '--status-host', '127.0.0.1', '--', ...shell]],
    // A held socket: the fixture's node gets the sockets and the listen preload (it never listens).
    [GSUP[0], [GSUP[1], '--listen', String(listenPort), '--', ...shell]],
  ];
  if (tools.tini) commands.push(['tini', ['-g', '--', ...shell]]);
  if (tools.dumbInit) commands.push(['dumb-init', shell]);
  const chains = [];
  let scrapes = 0;
  const scraper = setInterval(() => {
    get({ host: '127.0.0.1', port: statusPort, path: '/metrics', agent: false }, (response) =>
      response.resume().on('end', () => scrapes++),
    ).on('error', () => {});
  }, 100);
  let results;
  try {
    for (const [command, args] of commands) chains.push(await startChain(command, args));
    results = await takeTurns(chains, signals);
  } finally {
    clearInterval(scraper);
    for (const chain of chains) {
      chain.child.kill('SIGTERM');
      await exited(chain.child);
    }
  }
  const [gsup, naive, scraped, listening, ...others] = results;
  const pair = (result) => `${ms(result.median)} / ${ms(result.p99)}`;
  const anchors = [`naive forwarder ${pair(naive)}`];
  if (tools.tini) anchors.push(`tini -g ${pair(others[0])}`);
  if (tools.dumbInit) anchors.push(`dumb-init ${pair(others.at(-1))}`);
  row({
    id: 'latency',
    params: { signals },
    result: `${pair(gsup)} = ${(gsup.median / naive.median).toFixed(2)}× naive`,
    anchors: anchors.join(', '),
    measured: { ratio: gsup.median / naive.median, p99Ms: gsup.p99 },
  });
  row({
    id: 'latency-scraped',
    params: { scrapes },
    result: `${pair(scraped)} = ${(scraped.median / naive.median).toFixed(2)}× naive`,
    measured: { ratio: scraped.median / naive.median, p99Ms: scraped.p99, scrapes },
  });
  row({
    id: 'latency-listen',
    params: { signals },
    result: `${pair(listening)} = ${(listening.median / naive.median).toFixed(2)}× naive`,
    measured: { ratio: listening.median / naive.median, p99Ms: listening.p99 },
  });
}
