import { get } from 'node:http';
import { createServer } from 'node:net';

/** A port nothing listens on right now (on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A GET of `path` on a status port (127.0.0.1): its status and body. */
export function status(port: number, path: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ code: response.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}
