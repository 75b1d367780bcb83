import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

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

/** How keep-alive requests ended; `retried`: see keepAliveLoad. */
export type KeepAliveCounts = Record<Outcome | 'retried', number>;

/**
 * `clients` loops of requests on keep-alive connections (a connection is used again until the server answers
 * `Connection: close` or closes it), until `ms` have passed (or `done` says so). A connection used before that
 * the server closed before any byte of an answer is the race HTTP/1.1 leaves to clients (RFC 9112 9.3.1: an
 * idempotent request may be sent again): the request is sent again on a new connection and counted `retried`,
 * apart from what was lost.
 */
export async function keepAliveLoad(port: number, clients: number, ms: number, done?: () => boolean) {
  const counts: KeepAliveCounts = { ok: 0, refused: 0, reset: 0, timeout: 0, retried: 0 };
  const deadline = Date.now() + ms;
  const more = () => Date.now() < deadline && !(done?.() ?? false);
  const client = async () => {
    let connection: KeepAlive | undefined;
    while (more()) {
      const reused = connection !== undefined;
      connection ??= new KeepAlive(port);
      const { outcome, again } = await connection.request();
      if (!again) connection = undefined;
      if (outcome === 'unanswered' && reused) counts.retried++;
      else counts[outcome === 'unanswered' ? 'reset' : outcome]++;
    }
    connection?.close();
  };
  await Promise.all(Array.from({ length: clients }, client));
  return counts;
}

/** One keep-alive connection: requests one after the other, each answer read by its Content-Length. */
class KeepAlive {
  private readonly socket: Socket;
  private buffer = '';
  private error: string | undefined;
  private ended = false;
  private wake: () => void = () => {};

  constructor(port: number, host = '127.0.0.1') {
    this.socket = connect({ port, host });
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => ((this.buffer += chunk), this.wake()));
    this.socket.on('end', () => ((this.ended = true), this.wake()));
    this.socket.on('error', (error: NodeJS.ErrnoException) => ((this.error = error.code ?? 'error'), this.wake()));
    this.socket.on('close', () => ((this.ended = true), this.wake()));
  }

  /** One request: how it ended, and whether the connection may carry the next. */
  async request(timeoutMs = 5000): Promise<{ outcome: Outcome | 'unanswered'; again: boolean }> {
    if (!this.ended && this.error === undefined) this.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const until = Date.now() + timeoutMs;
    for (;;) {
      const answer = this.answer();
      if (answer) {
        this.buffer = this.buffer.slice(answer.length);
        const close = /\r\nconnection: close\r\n/i.test(answer.head) || this.ended;
        if (close) this.close();
        return { outcome: /^HTTP\/1\.1 200 /.test(answer.head) ? 'ok' : 'reset', again: !close };
      }
      if (this.error !== undefined || this.ended) {
        this.close();
        if (this.error === 'ECONNREFUSED') return { outcome: 'refused', again: false };
        return { outcome: this.buffer === '' ? 'unanswered' : 'reset', again: false };
      }
      const left = until - Date.now();
      if (left <= 0) return (this.close(), { outcome: 'timeout', again: false });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => (clearTimeout(timer), resolve());
      });
    }
  }

  /** A whole answer at the front of the buffer: its head and its length (Content-Length bodies only). */
  private answer(): { head: string; length: number } | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = this.buffer.slice(0, end + 2);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const total = end + 4 + length;
    return this.buffer.length >= total ? { head, length: total } : undefined;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The socket inodes a process holds (from /proc/PID/fd). */
export function socketInodes(pid: number): number[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      return match ? [Number(match[1])] : [];
    } catch {
      return [];
    }
  });
}
