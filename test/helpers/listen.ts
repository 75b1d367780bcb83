import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

/** How one request on a connection of its own ended. */
export type Outcome = 'ok' | 'refused' | 'reset' | 'timeout';

/** One HTTP request on a new connection to host:port (nothing kept alive): its outcome and the body. */
export function request(
  port: number,
  host = '127.0.0.1',
  timeoutMs = 5000,
): Promise<{ outcome: Outcome; body: string }> {
  return new Promise((resolve) => {
    let answer = '';
    let settled = false;
    const done = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome, body: answer.split('\r\n\r\n')[1] ?? '' });
    };
    const socket = connect({ port, host }, () =>
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    );
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => done(/^HTTP\/1\.[01] 200 /.test(answer) ? 'ok' : 'reset'));
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'refused' : 'reset'));
  });
}

/** `clients` loops of one-connection requests until `ms` have passed (or `done` says so): how each ended. */
export async function load(port: number, clients: number, ms: number, done?: () => boolean) {
  const counts: Record<Outcome, number> = { ok: 0, refused: 0, reset: 0, timeout: 0 };
  const deadline = Date.now() + ms;
  const client = async () => {
    while (done ? !done() && Date.now() < deadline : Date.now() < deadline) counts[(await request(port)).outcome]++;
  };
  await Promise.all(Array.from({ length: clients }, client));
  return counts;
}

/** The TCP sockets the kernel shows on this local port: state (hex, 0A = LISTEN, 01 = ESTABLISHED), queue, inode. */
export function socketsOnPort(port: number): Array<{ state: string; rxQueue: number; inode: number }> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'latin1')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields.length > 9 && fields[1].endsWith(`:${hex}`))
      .map((fields) => ({
        state: fields[3],
        rxQueue: parseInt(fields[4].split(':')[1], 16),
        inode: Number(fields[9]),
      })),
  );
}
