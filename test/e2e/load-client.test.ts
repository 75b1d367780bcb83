import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoad, type LoadResult } from '../../bench/lib/load.js';
import { freePort } from '../helpers/net.js';

// The load client of the restarts benchmark and its container test (bench/lib/load-client.js), against
// servers that fail in one known way each: every attempt lands in the one count it belongs to. The figures
// and the container test lean on these counts (0 refused, reset + lost against what a crash held).

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function listening<T extends Server>(server: T): Promise<number> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

/** The load for `ms`, then its counts. */
async function loadFor(port: number, ms: number, clients = { one: 2, keep: 2 }): Promise<LoadResult> {
  const load = await startLoad({ port, ...clients });
  await new Promise((resolve) => setTimeout(resolve, ms));
  return load.stop();
}

const failures = (kind: LoadResult['kinds']['one']) => kind.refused + kind.reset + kind.lost + kind.non2xx;

describe('the load client: each attempt counted once, where it belongs', () => {
  it('a server that answers: every attempt answered, the connect in the latency, the pid counted', async () => {
    const server = createHttpServer((_request, response) => {
      setTimeout(() => response.end('4242\n'), 5);
    });
    const port = await listening(server);
    const { kinds } = await loadFor(port, 500);
    for (const kind of [kinds.one, kinds.keep]) {
      expect(kind.attempts).toBeGreaterThan(10);
      expect(kind.answered).toBe(kind.attempts);
      expect(failures(kind)).toBe(0);
      expect(kind.pids).toEqual({ 4242: kind.answered });
      expect(kind.p50Ms).toBeGreaterThanOrEqual(5);
    }
  });

  it('keep-alive clients reuse one connection until told Connection: close; one-connection clients never do', async () => {
    let connections = 0;
    let answers = 0;
    const server = createHttpServer((_request, response) => {
      // Every fifth answer closes the connection: a keep-alive client opens a new one and loses nothing.
      if (++answers % 5 === 0) response.setHeader('connection', 'close');
      response.end('1\n');
    });
    server.on('connection', () => connections++);
    const port = await listening(server);
    const { kinds } = await loadFor(port, 500, { one: 0, keep: 1 });
    expect(kinds.keep.answered).toBe(kinds.keep.attempts);
    expect(kinds.keep.attempts).toBeGreaterThan(20);
    // One connection per five answers, and the last one may be open.
    expect(connections).toBeGreaterThanOrEqual(Math.floor(kinds.keep.attempts / 5));
    expect(connections).toBeLessThanOrEqual(Math.ceil(kinds.keep.attempts / 5) + 1);

    connections = 0;
    const { kinds: onlyOne } = await loadFor(port, 300, { one: 1, keep: 0 });
    expect(onlyOne.one.answered).toBe(onlyOne.one.attempts);
    expect(connections).toBe(onlyOne.one.attempts);
  });

  it('nothing listening: every attempt refused, and tried again 20 ms later, not at once', async () => {
    const port = await freePort();
    const { kinds } = await loadFor(port, 500, { one: 1, keep: 1 });
    for (const kind of [kinds.one, kinds.keep]) {
      expect(kind.refused).toBe(kind.attempts);
      expect(kind.attempts).toBeGreaterThan(5);
      expect(kind.attempts).toBeLessThanOrEqual(26);
    }
  });

  it('a connection reset once accepted: reset; one closed without an answer (an empty reply): lost', async () => {
    const resetting = createServer((socket: Socket) => socket.once('data', () => socket.resetAndDestroy()));
    const { kinds: reset } = await loadFor(await listening(resetting), 300);
    for (const kind of [reset.one, reset.keep]) {
      expect(kind.attempts).toBeGreaterThan(5);
      expect(kind.reset).toBe(kind.attempts);
    }
    const closing = createServer((socket: Socket) => socket.once('data', () => socket.end()));
    const { kinds: empty } = await loadFor(await listening(closing), 300);
    for (const kind of [empty.one, empty.keep]) {
      expect(kind.attempts).toBeGreaterThan(5);
      expect(kind.lost).toBe(kind.attempts);
    }
  });

  it('another status is non-2xx: neither answered nor lost', async () => {
    const server = createHttpServer((_request, response) => {
      response.statusCode = 503;
      response.end('busy\n');
    });
    const { kinds } = await loadFor(await listening(server), 300);
    for (const kind of [kinds.one, kinds.keep]) {
      expect(kind.attempts).toBeGreaterThan(5);
      expect(kind.non2xx).toBe(kind.attempts);
      expect(kind.answered + kind.lost + kind.reset + kind.refused).toBe(0);
    }
  });
});
