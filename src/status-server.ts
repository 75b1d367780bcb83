import { createServer, type Server } from 'node:http';
import type { StatusBoard } from './engine/status-board.js';
import { UsageError } from './options/errors.js';

// The orchestrator's view: plain HTTP, GET and HEAD, three paths. It reads
// what the supervision last published and never touches its loop.

function answer(path: string, board: StatusBoard): [number, string, string] {
  switch (path) {
    case '/livez':
      return [200, 'text/plain; charset=utf-8', 'ok\n']; // the loop answers: gsup lives
    case '/readyz': {
      const { readiness } = board;
      return readiness.ready ? [200, 'text/plain; charset=utf-8', 'ready\n'] : [503, 'text/plain; charset=utf-8', `${readiness.reason}\n`];
    }
    case '/metrics':
      return [200, 'text/plain; version=0.0.4; charset=utf-8', board.metrics()];
    default:
      return [404, 'text/plain; charset=utf-8', 'not found\n'];
  }
}

/** Listens on host:port (resolves once listening); a port that cannot be bound is a usage error, before anything runs. */
export function serveStatus(board: StatusBoard, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    const path = (request.url ?? '/').split('?')[0];
    // /metrics: the tree as it is now (a look, off the signal path), not as the last signal found it.
    void (path === '/metrics' ? board.freshTree() : Promise.resolve()).then(() => {
      const [status, type, body] = answer(path, board);
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new UsageError(`cannot serve the status endpoint on ${host}:${port} (--status-port): ${error.code ?? error.message}`));
    });
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      server.on('error', () => {}); // a client's error is its own
      resolve(server);
    });
  });
}
