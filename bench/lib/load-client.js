#!/usr/bin/env node
// The load of the restarts benchmark and of its container test: HTTP/1.1 clients over raw `net` sockets in
// one Node process that does nothing else (no http.Agent, no parser but the few lines below), so that what it
// measures is the server's and not its own. Each client sends its next request when the last one is settled.
//   one-connection clients: a new TCP connection per request (`Connection: close`);
//   keep-alive clients: one connection, reused until the server closes it or says `Connection: close`.
// Each attempt ends as exactly one of:
//   answered   a whole 2xx answer;
//   non-2xx    a whole answer with another status (a closing server's 503, say): the server answered, no;
//   refused    the connect failed with ECONNREFUSED (that client tries again 20 ms later, not at once);
//   reset      ECONNRESET or EPIPE once connected (mid-request, or a keep-alive connection reused as it ended);
//   lost       anything else: the connection ended without a whole answer (an empty reply), another error,
//              or no answer within --timeout.
// Latency: from the attempt's start (before the connect, for a new connection) to the answer's last byte.
//   node bench/lib/load-client.js --port P [--host H] [--one N] [--keep N] [--timeout MS]
// Prints `started` at once; on a line `stop` (or stdin's end) it stops sending, waits for what is in flight
// (up to --timeout), and prints one JSON line: per kind { attempts, answered, non2xx, refused, reset, lost, p50Ms,
// p99Ms, maxMs, pids: { PID: answers } }, and the client's own cost (cpuMs, wallMs, loopLagP99Ms).
import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index < 0 ? fallback : args[index + 1];
};
const port = Number(option('--port'));
const host = option('--host', '127.0.0.1');
const counts = { one: Number(option('--one', 10)), keep: Number(option('--keep', 10)) };
const timeoutMs = Number(option('--timeout', 10_000));
const REFUSED_PAUSE_MS = 20;
// The loop-delay histogram counts the timer's own interval too: its lag is what exceeds it.
const LAG_RESOLUTION_MS = 10;

const kinds = {};
for (const kind of Object.keys(counts))
  kinds[kind] = { attempts: 0, answered: 0, non2xx: 0, refused: 0, reset: 0, lost: 0, latencies: [], pids: {} };

let running = true;
let inFlight = 0;
let idleResolve;
const request = (keepAlive) =>
  `GET / HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n`;

/** Parses one answer from `buffer`: undefined while incomplete, else { status, close, pid, rest }. */
function parse(buffer) {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buffer.subarray(0, end).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? -1);
  if (length < 0) return { status: 0, close: true, pid: '', rest: Buffer.alloc(0) };
  if (buffer.length < end + 4 + length) return undefined;
  const pid = buffer
    .subarray(end + 4, end + 4 + length)
    .toString('latin1')
    .trim();
  return { status, close: /\r\nconnection:\s*close/i.test(head), pid, rest: buffer.subarray(end + 4 + length) };
}

/** One client of `kind`: a loop of attempts, on one connection at a time. */
function client(kind) {
  const stats = kinds[kind];
  const keepAlive = kind === 'keep';
  let socket;
  let connected = false;
  let buffer = Buffer.alloc(0);
  let current; // the attempt in flight: { started, timer, settle }

  const next = (pause) => {
    if (!running) return;
    if (pause) setTimeout(attempt, pause);
    else setImmediate(attempt);
  };
  const drop = () => {
    socket?.destroy();
    socket = undefined;
    connected = false;
    buffer = Buffer.alloc(0);
  };

  function settle(outcome, pid) {
    const attemptNow = current;
    if (!attemptNow) return;
    current = undefined;
    clearTimeout(attemptNow.timer);
    stats[outcome]++;
    if (outcome === 'answered') {
      stats.latencies.push(Number(process.hrtime.bigint() - attemptNow.started) / 1e6);
      stats.pids[pid] = (stats.pids[pid] ?? 0) + 1;
    }
    inFlight--;
    if (inFlight === 0 && !running) idleResolve?.();
    next(outcome === 'refused' ? REFUSED_PAUSE_MS : 0);
  }

  function open() {
    const made = connect({ port, host, noDelay: true });
    socket = made;
    made.on('connect', () => {
      connected = true;
    });
    made.on('data', (chunk) => {
      if (made !== socket) return;
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const answer = parse(buffer);
      if (!answer) return;
      buffer = answer.rest;
      const reuse = keepAlive && !answer.close;
      if (!reuse) drop();
      const outcome = answer.status >= 200 && answer.status < 300 ? 'answered' : answer.status > 0 ? 'non2xx' : 'lost';
      settle(outcome, answer.pid);
    });
    made.on('error', (error) => {
      if (made !== socket) return;
      const wasConnected = connected;
      drop();
      if (!wasConnected && error.code === 'ECONNREFUSED') settle('refused');
      else if (error.code === 'ECONNRESET' || error.code === 'EPIPE') settle('reset');
      else settle('lost');
    });
    made.on('close', () => {
      if (made !== socket) return;
      // Ended without a whole answer and without an error: an empty reply.
      drop();
      settle('lost');
    });
  }

  function attempt() {
    if (!running) return;
    stats.attempts++;
    inFlight++;
    current = { started: process.hrtime.bigint() };
    current.timer = setTimeout(() => {
      drop();
      settle('lost');
    }, timeoutMs);
    if (!socket) open();
    socket.write(request(keepAlive));
  }

  next(0);
}

const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
lag.enable();
const cpuStart = process.cpuUsage();
const wallStart = process.hrtime.bigint();
for (const [kind, count] of Object.entries(counts)) for (let index = 0; index < count; index++) client(kind);
process.stdout.write('started\n');

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? undefined
    : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  running = false;
  const wallMs = Number(process.hrtime.bigint() - wallStart) / 1e6;
  if (inFlight > 0)
    await new Promise((resolve) => {
      idleResolve = resolve;
      setTimeout(resolve, timeoutMs + 1000).unref();
    });
  lag.disable();
  const cpu = process.cpuUsage(cpuStart);
  const result = {
    kinds: {},
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    loopLagP99Ms: lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS,
  };
  for (const [kind, stats] of Object.entries(kinds)) {
    const { latencies, ...rest } = stats;
    result.kinds[kind] = {
      ...rest,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: percentile(latencies, 100),
    };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}
const input = createInterface({ input: process.stdin });
input.on('line', (line) => line.trim() === 'stop' && stop());
input.on('close', stop);
