import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import { ROOT, Run, fixture, type RunOptions } from './gsup.js';
import { freePort } from './net.js';

// What gsup --listen hands a run, made without gsup (fixtures/hold-listen.py): the listen preload's tests
// stand on it, apart from gsup's own side.

export const PRELOAD = join(ROOT, 'dist', 'listen-preload.cjs');
export const WITH_PRELOAD = `--require "${PRELOAD}"`;

export interface Holding {
  run: Run;
  /** The first held socket's port, inode and address as bound. */
  port: number;
  ino: string;
  /** `DEV:INO`, as fstat gives them. */
  id: string;
  address: string;
}

/**
 * `command` run with held sockets at fds 3… (ADDRESS: a port, HOST:PORT, [V6]:PORT; PORT alone by default: a
 * free port, on [::]), the report channel after them, and NODE_OPTIONS naming the preload. PORT in its
 * environment is the first held port.
 */
export async function holding(
  command: string[],
  options: RunOptions & { addresses?: (port: number) => string[]; holder?: string[] } = {},
): Promise<Holding> {
  const port = await freePort();
  const addresses = options.addresses?.(port) ?? [String(port)];
  const run = new Run(
    'python3',
    [fixture('hold-listen.py'), ...(options.holder ?? []), ...addresses, '--', ...command],
    {
      ...options,
      env: { PORT: String(port), NODE_OPTIONS: WITH_PRELOAD, ...options.env },
    },
  );
  const [, dev, ino, address] = await run.waitForLine(/^held 0 (\d+):(\d+) (\S+) \d+$/);
  return { run, port, ino, id: `${dev}:${ino}`, address };
}

export interface Listener {
  /** The Send-Q column of a listening socket: its backlog. */
  backlog: number;
  ino: string;
  pids: number[];
}

/** The listening TCP sockets on `port`, from the kernel (ss): their backlog, inode, and who holds each. */
export function listeners(port: number): Listener[] {
  const out = execFileSync('ss', ['-Hltnpe', `sport = :${port}`], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.startsWith('LISTEN'))
    .map((line) => ({
      backlog: Number(line.split(/\s+/)[2]),
      ino: /ino:(\d+)/.exec(line)![1],
      pids: [...line.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1])),
    }));
}

export const somaxconn = (): number => Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));

export type Kind = 'net' | 'http' | 'https' | 'http2' | 'http2s';

/** One request (or connection, for net) on a fresh connection to localhost:`port`; the answer's body. */
export function ask(kind: Kind, port: number, host = 'localhost'): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer on ${host}:${port} (${kind})`)), 5000);
    const done = (body: string) => (clearTimeout(timer), resolve(body.trim()));
    const fail = (error: Error) => (clearTimeout(timer), reject(error));
    if (kind === 'net') {
      let body = '';
      net
        .connect(port, host)
        .on('data', (chunk) => (body += chunk))
        .on('end', () => done(body))
        .on('error', fail);
    } else if (kind === 'http2' || kind === 'http2s') {
      const session = http2.connect(`${kind === 'http2' ? 'http' : 'https'}://${host}:${port}`, {
        rejectUnauthorized: false,
      });
      session.on('error', fail);
      let body = '';
      session
        .request({ ':path': '/' })
        .on('data', (chunk) => (body += chunk))
        .on('end', () => (session.close(), done(body)))
        .on('error', fail);
    } else {
      const get = kind === 'https' ? https.get : http.get;
      get({ host, port, agent: false, rejectUnauthorized: false }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk)).on('end', () => done(body));
      }).on('error', fail);
    }
  });
}
