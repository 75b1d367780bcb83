// The drain benchmark: when the container is stopped, does a request in
// flight fail? An HTTP app whose requests take 300 ms (fixtures/drain-server.js,
// which closes its listener on SIGTERM/SIGINT and answers what it has), 20
// clients in a loop, and after 1 s of load a SIGTERM to PID 1. Counted: the
// requests the app had accepted (its status line came at once) and never
// finished ("lost"), and the time from the SIGTERM to PID 1's exit. A
// connection reset before the app took it (closing a listener resets what
// waits in its backlog) is counted apart, as "reset". In a
// real container (podman, --network host) where it runs, else under
// `unshare --pid` (same network). Alone: `node bench/drain.js`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IMAGE, buildImage, podmanEnv, podmanSkipReason, podmanTry, removeContainer } from '../scripts/container.js';
import { childrenOf } from './lib/proc.js';
import { GSUP, ROOT, has, sleep, unshareWorks } from './lib/spawn.js';
import { renderTable } from './lib/table.js';

const CLIENTS = 20;
const LOAD_MS = 1000;
const PM2 = 'node_modules/.bin/pm2';
const CONFIG = 'fixtures/drain.config.cjs';

const CHAINS = [
  { name: '`npx tsx server.ts`', command: ['npx', 'tsx', 'fixtures/server.ts'] },
  { name: '`pm2-runtime ecosystem.config.js`', command: ['node_modules/.bin/pm2-runtime', CONFIG] },
  { name: 'bootstrap: `pm2 start ecosystem.config.js`', command: ['sh', '-c', `${PM2} start ${CONFIG} >/dev/null`] },
  {
    name: "bootstrap: `pm2 start …; trap 'pm2 kill; exit 0' TERM INT; while sleep 1`",
    command: [
      'sh',
      '-c',
      `${PM2} start ${CONFIG} >/dev/null; trap '${PM2} kill >/dev/null; exit 0' TERM INT; while sleep 1; do :; done`,
    ],
  },
];

/** 20 clients, each sending its next request when the last one ends. */
function load(port) {
  const stats = { answered: 0, lost: 0, reset: 0, refused: 0 };
  let running = true;
  let pending = 0;
  const one = () => {
    if (!running) return;
    pending++;
    let connected = false;
    let accepted = false;
    let settled = false;
    const settle = (outcome) => {
      if (settled) return;
      settled = true;
      stats[outcome]++;
      pending--;
      // A refused connection (the listener is closed, or not open yet) is tried again a little later.
      if (outcome === 'refused') setTimeout(one, 20);
      else setImmediate(one);
    };
    const request = get({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
      accepted = true;
      response.on('data', () => {});
      response.on('end', () => settle(response.complete && response.statusCode === 200 ? 'answered' : 'lost'));
      response.on('error', () => settle('lost'));
    });
    request.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    request.on('error', () => settle(accepted ? 'lost' : connected ? 'reset' : 'refused'));
  };
  return {
    stats,
    start: () => {
      for (let index = 0; index < CLIENTS; index++) one();
    },
    async stop() {
      running = false;
      for (let waited = 0; pending > 0 && waited < 5000; waited += 10) await sleep(10);
      return stats;
    },
  };
}

async function answers(port) {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200));
    });
    request.on('error', () => resolve(false));
  });
}

/** A place to run one chain under one supervisor as PID 1, and to stop it. */
function podmanBox(entrypoint, command, port) {
  const name = `gsup-drain-${process.pid}-${port}`;
  const run = podmanTry([
    'run',
    '-d',
    '--network',
    'host',
    '--name',
    name,
    '-w',
    '/src',
    '-v',
    `${ROOT}:/src:ro`,
    '-e',
    `PORT=${port}`,
    '-e',
    'PM2_HOME=/tmp/pm2',
    '-e',
    'HOME=/tmp',
    '--entrypoint',
    JSON.stringify(entrypoint),
    IMAGE,
    ...command,
  ]);
  if (run.status !== 0) throw new Error(`podman run: ${run.stderr.trim()}`);
  const waited = spawn('podman', ['wait', name], { env: podmanEnv(), stdio: 'ignore' });
  const done = new Promise((resolve) => waited.once('exit', resolve));
  return {
    done,
    signal: () => podmanTry(['kill', '-s', 'TERM', name]),
    remove: () => removeContainer(name),
  };
}

function unshareBox(entrypoint, command, port) {
  const home = mkdtempSync(join(tmpdir(), 'gsup-drain-'));
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', ...entrypoint, ...command], {
    cwd: ROOT,
    stdio: 'ignore',
    env: { ...process.env, PORT: String(port), PM2_HOME: join(home, 'pm2'), HOME: home },
  });
  const done = new Promise((resolve) => child.once('exit', resolve));
  // PID 1 of the namespace: unshare's own child (none once it has ended).
  const signalPid1 = (signal) => {
    for (const pid of childrenOf(child.pid)) {
      try {
        process.kill(pid, signal);
      } catch {
        // it ended meanwhile
      }
    }
  };
  return {
    done,
    signal: () => signalPid1('SIGTERM'),
    remove: () => {
      // PID 1's SIGKILL ends its namespace and everything in it, should it still run.
      signalPid1('SIGKILL');
      child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** One chain under one supervisor: lost requests and stop time, or why not measured. */
async function measure(box) {
  let exited = false;
  box.done.then(() => (exited = true));
  const port = box.port;
  const deadline = Date.now() + 60_000;
  while (!(await answers(port))) {
    if (exited) return { note: 'exits at once' };
    if (Date.now() > deadline) return { note: 'never answered' };
    await sleep(100);
  }
  const clients = load(port);
  clients.start();
  await sleep(LOAD_MS);
  const sent = performance.now();
  box.signal();
  const stopped = await Promise.race([box.done.then(() => performance.now()), sleep(30_000).then(() => undefined)]);
  const stats = await clients.stop();
  if (stopped === undefined) return { note: 'did not stop within 30 s', ...stats };
  return { stopMs: stopped - sent, ...stats };
}

/**
 * Measures every chain under every supervisor present: the drain table
 * (markdown lines) with its caption (where and how), and one row of the main
 * table per chain for gsup.
 */
export async function drainTable(log = (line) => process.stderr.write(`${line}\n`)) {
  const podmanWhy = podmanSkipReason();
  const inPodman = podmanWhy === undefined;
  let held = { tini: has('tini'), dumbInit: has('dumb-init') };
  if (inPodman) held = buildImage();
  if (!inPodman && !unshareWorks()) {
    const why = `no podman (${podmanWhy}) and no unshare`;
    return {
      caption: `drain benchmark skipped: ${why}`,
      lines: [],
      rows: CHAINS.map((chain) => skippedRow(chain, why)),
    };
  }
  const where = inPodman
    ? 'podman (runc), PID 1 of a container, --network host'
    : `unshare --pid (podman: ${podmanWhy})`;
  const supervisors = [{ name: 'gsup', entrypoint: inPodman ? ['gsup', '--'] : [...GSUP, '--'] }];
  if (held.tini)
    supervisors.push(
      { name: 'tini', entrypoint: ['tini', '--'] },
      { name: 'tini -g', entrypoint: ['tini', '-g', '--'] },
    );
  if (held.dumbInit) supervisors.push({ name: 'dumb-init', entrypoint: ['dumb-init'] });
  let port = 18000 + (process.pid % 1000) * 10;
  const caption = `Drain: ${where}; ${CLIENTS} clients, 300 ms requests, SIGTERM to PID 1 after ${LOAD_MS / 1000} s of load. Lost requests (of those in flight); time from SIGTERM to PID 1's exit.`;
  const lines = [
    `| chain | ${supervisors.map((supervisor) => supervisor.name).join(' | ')} |`,
    `| --- | ${supervisors.map(() => '---').join(' | ')} |`,
  ];
  const rows = [];
  for (const chain of CHAINS) {
    const results = [];
    for (const supervisor of supervisors) {
      const thisPort = ++port;
      const box = (inPodman ? podmanBox : unshareBox)(supervisor.entrypoint, chain.command, thisPort);
      box.port = thisPort;
      let result;
      try {
        result = await measure(box);
      } finally {
        box.remove();
      }
      log(`drain: ${chain.name} under ${supervisor.name}: ${JSON.stringify(result)}`);
      results.push(result);
    }
    const cell = (result) =>
      result.stopMs === undefined ? result.note : `${result.lost} lost, ${(result.stopMs / 1000).toFixed(2)} s`;
    lines.push(`| ${chain.name} | ${results.map(cell).join(' | ')} |`);
    rows.push(gsupRow(chain, results[0], results.slice(1)));
  }
  return { caption, lines, rows };
}

const skippedRow = (chain, why) => ({ id: 'drain', params: { chain: chain.name }, skipped: why });

/** gsup's row: its lost requests, and its stop time against the fastest other supervisor that lost none. */
function gsupRow(chain, gsup, others) {
  const best = Math.min(
    ...others.filter((result) => result.stopMs !== undefined && result.lost === 0).map((result) => result.stopMs),
  );
  const ratio = Number.isFinite(best) && gsup.stopMs !== undefined ? gsup.stopMs / best : undefined;
  return {
    id: 'drain',
    params: { chain: chain.name },
    result: gsup.stopMs === undefined ? gsup.note : `${gsup.lost} lost`,
    anchors: ratio === undefined ? 'no other clean stop' : `${ratio.toFixed(2)}× the best`,
    // A stop not measured is a lost one.
    measured: { lost: gsup.stopMs === undefined ? Infinity : gsup.lost, ratio },
  };
}

export default async function drain({ row, table }) {
  const { caption, lines, rows } = await drainTable();
  for (const each of rows) row(each);
  table('drain', { caption, lines });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { caption, lines, rows } = await drainTable();
  console.log(`\n${renderTable(rows).join('\n')}\n\n${[caption, '', ...lines].join('\n')}`);
}
