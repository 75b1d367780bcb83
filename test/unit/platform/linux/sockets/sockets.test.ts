import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readSync, writeSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { heldSocketCalls as calls } from '../../../../../src/platform/linux/sockets/sockets.js';
import { socketTakers } from '../../../../../src/platform/linux/sockets/socket-takers.js';
import type { BoundSocket, ListenSpec } from '../../../../../src/platform/index.js';
import { freePort } from '../../../../helpers/net.js';

// Held sockets through libc, for real (Linux): bound and listening outside libuv, the kernel's queue, a holder's
// shutdown() seen, the shutdown at the end, the report channel's socketpair, and who takes a socket.

const linux = process.platform === 'linux';
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function held(host = '127.0.0.1'): Promise<{ spec: ListenSpec; socket: BoundSocket }> {
  const spec: ListenSpec = { family: host.includes(':') ? 6 : 4, host, port: await freePort(), dual: host === '::' };
  const socket = calls.listen(spec);
  if ('errno' in socket) throw new Error(`${socket.step}: ${socket.errno}`);
  cleanups.push(() => calls.close(socket.fd));
  return { spec, socket };
}

function connected(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const client = connect({ port, host }, () => resolve(client)).on('error', reject);
    cleanups.push(() => client.destroy());
  });
}

/** A child with `fd` at its fd 3 (as a run gets it). */
function child(fd: number, command: string, args: string[]): ChildProcess {
  const process_ = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit', fd] });
  cleanups.push(() => process_.kill('SIGKILL'));
  return process_;
}

const line = (process_: ChildProcess) =>
  new Promise<string>((resolve) => process_.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));

describe.runIf(linux)('held sockets through libc', () => {
  it('bound and listening, close-on-exec, with the kernel backlog; the queue counted by the kernel, none accepted', async () => {
    const { spec, socket } = await held();
    expect(calls.listening(socket.fd, spec)).toBe(true);
    expect(socket.backlog).toBeGreaterThan(0);
    expect(calls.queued(socket.fd)).toBe(0);
    await connected(spec.port);
    await connected(spec.port);
    expect(calls.queued(socket.fd)).toBe(2);
  });

  it('[::] with IPV6_V6ONLY=0 set: IPv4 clients come too', async () => {
    const { spec, socket } = await held('::');
    await connected(spec.port, '127.0.0.1');
    await connected(spec.port, '::1');
    expect(calls.queued(socket.fd)).toBe(2);
  });

  it('a port in use is refused by name (EADDRINUSE), an address not on this host too (EADDRNOTAVAIL)', async () => {
    const { spec } = await held();
    expect(calls.listen(spec)).toEqual({ step: 'bind', errno: 'EADDRINUSE' });
    expect(calls.listen({ family: 4, host: '10.9.9.9', port: spec.port, dual: false })).toEqual({
      step: 'bind',
      errno: 'EADDRNOTAVAIL',
    });
    expect(calls.listen({ family: 6, host: 'nope', port: spec.port, dual: false })).toEqual({
      step: 'inet_pton',
      errno: 'EINVAL',
    });
  });

  it("a holder's shutdown() ends the listening for every holder: seen by SO_ACCEPTCONN", async () => {
    const { spec, socket } = await held();
    const script = 'import socket; socket.socket(fileno=3).shutdown(socket.SHUT_RD); print("shut", flush=True)';
    const python = child(socket.fd, 'python3', ['-c', script]);
    expect(await line(python)).toBe('shut');
    expect(calls.listening(socket.fd, spec)).toBe(false);
  });

  it('the shutdown at the end: queued connections reset, new ones refused, though a child still holds it', async () => {
    const { spec, socket } = await held();
    const holder = child(socket.fd, 'sleep', ['30']);
    const queued = await connected(spec.port);
    const reset = new Promise((resolve) => queued.on('error', (error: NodeJS.ErrnoException) => resolve(error.code)));
    calls.shutDown(socket.fd);
    expect(await reset).toBe('ECONNRESET');
    await expect(connected(spec.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(holder.exitCode).toBeNull();
  });

  it('made blocking again after a Node holder made it non-blocking (for every holder)', async () => {
    const { socket } = await held();
    const node = child(socket.fd, process.execPath, [
      '-e',
      "const s = require('net').createServer().listen({ fd: 3 }, () => (console.log('ready'), s.close()))",
    ]);
    await line(node);
    // fdinfo's flags, in octal: the open file's, which every holder shares.
    const mode = () =>
      parseInt(/^flags:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${socket.fd}`, 'latin1'))![1], 8);
    const O_NONBLOCK = 0o4000;
    expect(mode() & O_NONBLOCK).toBe(O_NONBLOCK);
    calls.blocking(socket.fd);
    expect(mode() & O_NONBLOCK).toBe(0);
  });

  it('a socketpair for a report channel: what one end writes, the other reads', () => {
    const pair = calls.pair();
    if (typeof pair === 'string') throw new Error(pair);
    cleanups.push(() => pair.forEach((fd) => calls.close(fd)));
    writeSync(pair[1], 'word\n');
    const buffer = Buffer.alloc(16);
    expect(buffer.toString('utf8', 0, readSync(pair[0], buffer))).toBe('word\n');
  });

  it('who takes a socket: a process in accept(2) on it, or watching it in epoll; one only holding it, neither', async () => {
    const { socket } = await held();
    const inodes = new Set([socket.ino]);
    const holder = child(socket.fd, 'sleep', ['30']);
    const accept = 'import socket; s = socket.socket(fileno=3); print("ready", flush=True); s.accept()';
    const python = child(socket.fd, 'python3', ['-c', accept]);
    await line(python);
    // accept(2) shows once the thread sleeps in it: asked until then. (Before node starts: Node makes the
    // socket non-blocking, for every holder, and a Python accept() then fails at once.)
    const takes = async (process_: ChildProcess) => (await socketTakers(process_.pid!, inodes)).length;
    const wait = () => new Promise((resolve) => setTimeout(resolve, 10));
    for (let attempt = 0; attempt < 200 && (await takes(python)) === 0; attempt++) await wait();
    const node = child(socket.fd, process.execPath, [
      '-e',
      "require('net').createServer().listen({ fd: 3 }, () => console.log('ready'))",
    ]);
    await line(node);
    // Node's loop adds it to its epoll set at its next turn, after the listen callback.
    for (let attempt = 0; attempt < 200 && (await takes(node)) === 0; attempt++) await wait();
    expect(await Promise.all([holder, python, node].map(takes))).toEqual([0, 1, 1]);
    expect(await socketTakers(python.pid!, inodes)).toEqual([{ pid: python.pid, ino: socket.ino }]);
  });

  it('a process whose accept(2) runs in a thread other than the main one takes it too (Java, threaded Python)', async () => {
    const { socket } = await held();
    const inodes = new Set([socket.ino]);
    const threaded = [
      'import signal, socket, threading',
      's = socket.socket(fileno=3)',
      'threading.Thread(target=s.accept, daemon=True).start()',
      'print("ready", flush=True)',
      'signal.pause()',
    ].join('\n');
    const python = child(socket.fd, 'python3', ['-c', threaded]);
    await line(python);
    const takes = async () => await socketTakers(python.pid!, inodes);
    for (let attempt = 0; attempt < 200 && (await takes()).length === 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await takes()).toEqual([{ pid: python.pid, ino: socket.ino }]);
  });
});
