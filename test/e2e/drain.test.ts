import { Agent, get, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startLoad } from '../../bench/lib/load.js';
import { fixture, gsup, type Run } from '../helpers/gsup.js';
import { waitFor } from '../helpers/proc.js';
import { freePort } from '../helpers/net.js';

// Reloads and stops that lose nothing for apps written as their frameworks' guides write them (issue 36): the old
// run drains before its stop signal (its preload stops accepting, answers with `Connection: close`), and the
// app's own shutdown (express `server.close()`, fastify `close()`, koa's server close) then finds nothing to cut.

const APP = fixture('framework-app.cjs');
const FRAMEWORKS = ['express', 'fastify', 'koa'] as const;

/** The lines run R's fixture printed that begin with `what`. */
const linesOf = (run: Run, what: string, of: number) =>
  run.stdout.filter((line) => line.startsWith(`${what} `) && new RegExp(` run=${of}( |$)`).test(line));
const timeOf = (line: string | undefined) => BigInt(/ t=(\d+)/.exec(line ?? '')?.[1] ?? '0');
const said = (run: Run, pattern: RegExp, timeoutMs = 20_000) =>
  run.waitForLine(pattern, { stream: 'stderr', timeoutMs });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One GET through `agent`: its status and body, or the error's code. */
function fetch(
  port: number,
  agent: Agent | false,
  path = '/',
): Promise<{ status: number; body: string; socket?: Socket }> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path, agent }, (response: IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body, socket: request.socket ?? undefined }),
      );
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: error.code ?? String(error) }));
  });
}

function start(framework: string, port: number, more: string[] = [], app: string[] = []): Run {
  const args = ['-v', '--listen', `127.0.0.1:${port}`, '--reload-signal', 'HUP', ...more, '--'];
  return gsup([...args, 'node', APP, framework, '--port', `${port}`, ...app]);
}

describe('reloads drain the old run first: apps as their frameworks write them lose nothing', () => {
  it.each(FRAMEWORKS)(
    '%s: three reloads under load (one-connection and keep-alive clients): 0 refused, 0 reset, 0 lost, 0 non-2xx; each old run SIGTERMed once, once drained',
    async (framework) => {
      const port = await freePort();
      const run = start(framework, port, [], ['--delay', '20']);
      await run.ready('framework-app');
      await said(run, /run 1: pid \d+ took the held socket/);
      const load = await startLoad({ port, one: 5, keep: 5 });
      let kinds;
      try {
        for (const old of [1, 2, 3]) {
          await sleep(300);
          run.signal('SIGHUP');
          await said(run, new RegExp(`run ${old} retired in`));
        }
        await sleep(300);
      } finally {
        ({ kinds } = await load.stop());
      }
      console.log(
        `${framework}, 3 reloads: one-connection ${JSON.stringify(kinds.one)}, keep-alive ${JSON.stringify(kinds.keep)}`,
      );
      for (const kind of [kinds.one, kinds.keep]) {
        expect(kind).toMatchObject({ refused: 0, reset: 0, lost: 0 }); // lost counts any answer but a 200
        expect(kind.answered).toBeGreaterThan(30);
        expect(Object.keys(kind.pids).length).toBeGreaterThanOrEqual(3); // served by the runs in turn
      }
      for (const old of [1, 2, 3]) {
        const ready = new RegExp(`run ${old + 1} is ready .*: draining run ${old} \\(drain limit 6\\.00s\\)`);
        expect(run.stderr.some((line) => ready.test(line))).toBe(true);
        expect(linesOf(run, 'signal: SIGTERM', old)).toHaveLength(1);
        // The stop signal came once it held no connection: its own close found nothing to cut, and had no error.
        expect(
          run.stderr.some((line) => new RegExp(`run ${old} drained after .*: no connection left`).test(line)),
        ).toBe(true);
        expect(linesOf(run, 'connections:', old)).toEqual([expect.stringMatching(/^connections: 0 /)]);
        expect(linesOf(run, 'closed', old)).toEqual([expect.stringMatching(/ error=none$/)]);
        expect(run.stderr.find((line) => line.includes(`run ${old} retired in`))).toMatch(/, 0 killed/);
      }
      expect(linesOf(run, 'signal: SIGTERM', 4)).toEqual([]);
      run.signal('SIGTERM');
      expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
      expect(linesOf(run, 'closed', 4)).toEqual([expect.stringMatching(/ error=none$/)]);
    },
  );

  it("a kept-alive connection left idle is closed by the server's own keep-alive timeout, not by the reload; then the stop signal", async () => {
    const port = await freePort();
    const run = start('express', port, [], ['--keep-alive-timeout', '3000']);
    await run.ready('framework-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await fetch(port, agent);
      const answered = process.hrtime.bigint();
      expect(first.status).toBe(200);
      let closedAt: bigint | undefined;
      first.socket!.once('close', () => (closedAt = process.hrtime.bigint()));
      run.signal('SIGHUP');
      await said(run, /run 2 is ready/);
      await waitFor(() => closedAt !== undefined, 'the idle connection to close');
      // An idle connection is never cut (a request may be on its way): the server's own timeout (3 s) closed it.
      const idle = Number(closedAt! - answered) / 1e6;
      expect(idle).toBeGreaterThan(2500);
      await said(run, /run 1 drained after/);
      expect(run.stderr.some((line) => /run 1 drains: 1 connection\(s\) open/.test(line))).toBe(true);
      await run.waitForLine(/^closed .* run=1 /);
      // Ordered on the server's own clock: the client hears of the close later, by as much as its loop lags.
      const hungUp = linesOf(run, 'hung up', 1);
      expect(hungUp).toHaveLength(1);
      expect(timeOf(hungUp[0])).toBeGreaterThan(0n);
      expect(timeOf(linesOf(run, 'signal: SIGTERM', 1)[0])).toBeGreaterThan(timeOf(hungUp[0]));
      expect(linesOf(run, 'signal: SIGTERM', 1)).toHaveLength(1);
      expect(linesOf(run, 'closed', 1)).toEqual([expect.stringMatching(/ error=none$/)]);
      // The next request (a new connection) is the new run's.
      expect((await fetch(port, agent)).status).toBe(200);
    } finally {
      agent.destroy();
    }
    run.signal('SIGTERM');
    expect(await run.finished()).toEqual({ code: 0, signal: null });
  });

  it('pipelined requests on one connection, in flight when the drain begins: each answered, only the last says Connection: close', async () => {
    const port = await freePort();
    const run = start('express', port, [], ['--delay', '1500']);
    await run.ready('framework-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.on('error', () => {});
    const ask = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(ask + ask); // the second behind the first, before either is answered (each takes 1.5 s)
    run.signal('SIGHUP'); // run 2 is ready well within that: the drain begins with both in flight
    await said(run, /run 1 drains/);
    await closed;
    // Before: the first answer said close, and the second, queued behind it, was lost with the connection.
    const answers = [...text.matchAll(/HTTP\/1\.1 (\d+)[^]*?\r\nConnection: (\S+)/gi)].map((m) => `${m[1]} ${m[2]}`);
    expect(answers, text).toEqual(['200 keep-alive', '200 close']);
    await said(run, /run 1 drained after/);
    await run.waitForLine(/^closed .* run=1 /);
    expect(linesOf(run, 'signal: SIGTERM', 1)).toHaveLength(1);
    run.signal('SIGTERM');
    expect(await run.finished()).toEqual({ code: 0, signal: null });
  });

  it('a long connection (server-sent events) on the old run is served until the drain limit, then the stop signal, said at -v', async () => {
    const port = await freePort();
    const run = start('express', port, ['--reload-drain', '1500ms']);
    const pid = await run.ready('framework-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    const events: Array<{ pid: number; at: bigint }> = [];
    const stream = get({ host: '127.0.0.1', port, path: '/events', agent: false });
    const ended = new Promise<void>((resolve) => {
      stream.on('response', (response: IncomingMessage) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          for (const match of chunk.matchAll(/data: (\d+) \d+/g))
            events.push({ pid: Number(match[1]), at: process.hrtime.bigint() });
        });
        response.on('close', resolve);
      });
      stream.on('error', () => resolve());
    });
    await waitFor(() => events.length > 0, 'the first event');
    run.signal('SIGHUP');
    await said(run, /run 2 is ready/);
    const drainBegan = process.hrtime.bigint();
    await run.waitForLine(/^signal: SIGTERM .* run=1 /);
    const term = timeOf(linesOf(run, 'signal: SIGTERM', 1)[0]);
    // Served throughout the drain, by the old run, and the stop signal no sooner than the limit.
    const during = events.filter((event) => event.at > drainBegan && event.at < term);
    expect(during.length).toBeGreaterThan(8);
    expect(during.every((event) => event.pid === pid)).toBe(true);
    expect(Number(term - drainBegan) / 1e6).toBeGreaterThan(1300);
    await run.waitForLine(/^connections: .* run=1$/);
    expect(linesOf(run, 'connections:', 1)).toEqual([expect.stringMatching(/^connections: 1 /)]);
    const limit = /run 1 at the drain limit \(1\.50s\): 1 connection\(s\) still open; SIGTERM now/;
    expect(run.stderr.some((line) => limit.test(line))).toBe(true);
    // The app's own close waits for it (as without gsup): the client leaves, the close ends without an error.
    stream.destroy();
    await ended;
    await run.waitForLine(/^closed .* run=1 /);
    expect(linesOf(run, 'closed', 1)).toEqual([expect.stringMatching(/ error=none$/)]);
    await said(run, /run 1 retired in .*, 0 killed/);
    run.signal('SIGTERM');
    expect(await run.finished()).toEqual({ code: 0, signal: null });
  });
});

describe('the final stop: during --stop-delay answers say Connection: close', () => {
  it('keep-alive clients through a stop with a stop delay lose nothing, and have left before the app closes', async () => {
    const port = await freePort();
    const run = gsup([
      '-v',
      '--listen',
      `127.0.0.1:${port}`,
      '--stop-delay',
      '1500ms',
      '--',
      'node',
      APP,
      'express',
      '--port',
      `${port}`,
    ]);
    await run.ready('framework-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    // Five keep-alive clients (a load balancer's pool): they send until the stop delay is half over, then no more,
    // keeping what they hold open (idle in the pool).
    const agent = new Agent({ keepAlive: true, maxSockets: 5 });
    let sending = true;
    const outcomes = new Map<string, number>();
    let stopAt: bigint | undefined;
    const client = async () => {
      while (sending) {
        const answer = await fetch(port, agent);
        const outcome = answer.status === 200 ? 'ok' : `${answer.status} ${answer.body}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    };
    const clients = Promise.all(Array.from({ length: 5 }, client));
    try {
      await sleep(300);
      run.signal('SIGTERM');
      await said(run, /waiting 1\.50s before forwarding SIGTERM/);
      stopAt = process.hrtime.bigint();
      await sleep(700);
      sending = false;
      await clients;
      expect(await run.finished()).toEqual({ code: 0, signal: null });
    } finally {
      sending = false;
      agent.destroy();
    }
    console.log(`through a stop with a stop delay: ${JSON.stringify([...outcomes])}`);
    expect([...outcomes.keys()]).toEqual(['ok']);
    expect(outcomes.get('ok')).toBeGreaterThan(20);
    expect(stopAt).toBeDefined();
    // Every kept-alive connection had its answer with `Connection: close`: none was left for the app's close.
    expect(linesOf(run, 'connections:', 1)).toEqual([expect.stringMatching(/^connections: 0 /)]);
    expect(linesOf(run, 'closed', 1)).toEqual([expect.stringMatching(/ error=none$/)]);
  });
});
