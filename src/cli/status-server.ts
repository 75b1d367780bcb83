import { createServer, type Server } from 'node:http';
import type { StatusBoard } from '../engine/shell/status-board.js';
import { UsageError } from '../options/errors.js';
import { countEpipe } from '../platform/sigpipe.js';

// The orchestrator's view: plain HTTP, GET and HEAD, three paths. It reads
// what the supervision last published and never touches its loop.

function answer(path: string, board: StatusBoard): [number, string, string] {
  switch (path) {
    case '/livez':
      return [200, 'text/plain; charset=utf-8', 'ok\n']; // the loop answers: gsup lives
    case '/readyz': {
      const { readiness } = board;
      return readiness.ready
        ? [200, 'text/plain; charset=utf-8', 'ready\n']
        : [503, 'text/plain; charset=utf-8', `${readiness.reason}\n`];
    }
    case '/metrics':
      return [200, 'text/plain; version=0.0.4; charset=utf-8', board.metrics()];
    default:
      return [404, 'text/plain; charset=utf-8', 'not found\n'];
  }
}

/**
 * Listens on host:port (resolves once listening); a port that cannot be bound
 * is a usage error, before anything runs. No host: `::`, which takes IPv4 too
 * (Node binds it dual-stack); where the kernel has no IPv6, 0.0.0.0.
 */
export async function serveStatus(board: StatusBoard, port: number, host: string | undefined): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('method not allowed\n');
      return;
    }
    const path = (request.url ?? '/').split('?')[0];
    // /metrics: the tree as it is now (a look, off the signal path), not as the last signal found it.
    void (path === '/metrics' ? board.freshTree() : Promise.resolve()).then(() => {
      const [status, type, body] = answer(path, board);
      response.writeHead(status, {
        'content-type': type,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      response.end(request.method === 'HEAD' ? undefined : body);
    });
  });
  // A client gone before the answer is written (pipelined requests, then a close): the write meets EPIPE,
  // and the kernel raises SIGPIPE in gsup. That one is gsup's own, never forwarded to the app.
  server.on('connection', (socket) => socket.on('error', countEpipe));
  try {
    await listen(server, port, host ?? '::');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // No IPv6 here (ipv6.disable=1: EAFNOSUPPORT; no address: EADDRNOTAVAIL): IPv4 alone.
    const noIpv6 = code === 'EAFNOSUPPORT' || code === 'EADDRNOTAVAIL';
    if (host === undefined && noIpv6) await listen(server, port, '0.0.0.0');
    else throw error;
  }
  server.on('error', () => {}); // a client's error is its own
  return server;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const cause = error.code ?? error.message;
      const usage = new UsageError(`cannot serve the status endpoint on ${where} (--status-port): ${cause}`);
      reject(Object.assign(usage, { code: error.code }));
    });
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
}
