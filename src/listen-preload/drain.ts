// Draining (gsup's words on the report channel, engine/listen/wire.ts): a process that took a held socket reads
// one word from gsup, then no more (the next word is for the next such process).
// - `drain` (a reload's old run): its servers on held sockets stop accepting in this process alone (the socket
//   stays listening in gsup and the new run: never shutdown()), every further HTTP/1.1 answer says
//   `Connection: close` (HTTP/2: GOAWAY), and it says its open connections as they go. A kept-alive connection
//   that is idle is never cut (a request may be on its way): its next answer closes it, or the server's own
//   keep-alive timeout does. The app's own close() later behaves as without gsup.
// - `closing` (the final stop's delay): answers say `Connection: close`; it keeps accepting.
import type { Server, Socket } from 'node:net';
import { parseTell, type TellWord } from '../engine/listen/wire.js';
import { reportConns, say, type Holder } from './process.js';

/** What a server's listening handle is to net.Server (its `_handle`), as far as it is used here. */
interface Handle {
  close: (...args: unknown[]) => unknown;
  getsockname?: (out: Record<string, unknown>) => number;
  hasRef?: () => boolean;
  getAsyncId?: () => number;
}
type Watched = Server & { _handle?: Handle | null };
interface Answer {
  headersSent: boolean;
  shouldKeepAlive?: boolean;
  req?: { socket?: object };
  once(event: string, listener: () => void): unknown;
}
interface Session {
  close(): void;
  closed?: boolean;
  once(event: string, listener: () => void): unknown;
}

/** A process's drain: what it watches, and the word it was told. */
export interface Drain {
  told: TellWord | undefined;
  servers: Set<Watched>;
  conns: Set<Socket>;
  answers: Set<Answer>;
  /** The last answer begun on each connection: only it may say `Connection: close` (pipelined ones wait behind). */
  latest: WeakMap<object, Answer>;
  sessions: Set<Session>;
}

const drains = new WeakMap<Holder, Drain>();

/** This process's drain; gsup's words are read from the first on (a process that took a held socket). */
export function drainOf(holder: Holder): Drain {
  let drain = drains.get(holder);
  if (!drain) {
    const latest = new WeakMap<object, Answer>();
    drain = { told: undefined, servers: new Set(), conns: new Set(), answers: new Set(), latest, sessions: new Set() };
    drains.set(holder, drain);
    hear(holder, drain);
  }
  return drain;
}

/**
 * The last answer of its connection, not begun yet, says `Connection: close` (Node then closes the connection
 * once it is written). An earlier one of a pipelined batch does not: its connection still owes the answers queued
 * behind it (a close after the first would lose them).
 */
function closeAfter(drain: Drain, answer: Answer): void {
  const socket = answer.req?.socket;
  if (socket && drain.latest.get(socket) !== answer) return;
  if (!answer.headersSent && typeof answer.shouldKeepAlive === 'boolean') answer.shouldKeepAlive = false;
}

/** A new answer on a connection: the one before it, if it was to say `Connection: close` and has not, need not. */
function follows(drain: Drain, answer: Answer): void {
  const socket = answer.req?.socket;
  if (!socket) return;
  const before = drain.latest.get(socket);
  drain.latest.set(socket, answer);
  if (drain.told && before && !before.headersSent && before.shouldKeepAlive === false) before.shouldKeepAlive = true;
}

/** A server that took a held socket: its connections, answers and HTTP/2 sessions are watched from now on. */
export function watch(holder: Holder, server: Watched): void {
  const drain = drainOf(holder);
  if (drain.servers.has(server)) return;
  drain.servers.add(server);
  server.on('connection', (socket: Socket) => {
    drain.conns.add(socket);
    socket.once('close', () => {
      drain.conns.delete(socket);
      if (drain.told === 'drain') reportConns(holder, drain.conns.size);
    });
  });
  // First, so that an answer the app writes at once already says it (http, https; never emitted by others).
  server.prependListener('request', (_request: unknown, answer: Answer) => {
    follows(drain, answer);
    if (drain.told) return closeAfter(drain, answer);
    drain.answers.add(answer);
    answer.once('finish', () => drain.answers.delete(answer));
    answer.once('close', () => drain.answers.delete(answer));
  });
  server.on('session', (session: Session) => {
    if (drain.told) return session.close();
    drain.sessions.add(session);
    session.once('close', () => drain.sessions.delete(session));
  });
}

/**
 * This process's copy of the held socket closes (the socket listens on in gsup and the new run); the server keeps
 * a stand-in handle, so that what the app does later (`server.close()` and its callback, `address()`,
 * `listening`, ref/unref) goes as it would have: the process stays alive as the listening handle kept it.
 */
function stopAccepting(server: Watched): void {
  const handle = server._handle;
  if (!handle || typeof handle.close !== 'function') return;
  const address: Record<string, unknown> = {};
  handle.getsockname?.(address);
  const hold = setInterval(() => {}, 0x7fffffff);
  if (handle.hasRef?.() === false) hold.unref();
  const asyncId = handle.getAsyncId?.() ?? -1;
  server._handle = {
    close: (callback?: unknown) => {
      clearInterval(hold);
      if (typeof callback === 'function') process.nextTick(callback as () => void);
    },
    getsockname: (out) => (Object.assign(out, address), 0),
    ref: () => hold.ref(),
    unref: () => hold.unref(),
    hasRef: () => hold.hasRef(),
    getAsyncId: () => asyncId,
  } as Handle;
  handle.close();
}

function act(holder: Holder, drain: Drain, word: TellWord): void {
  drain.told = word;
  for (const answer of drain.answers) closeAfter(drain, answer);
  for (const session of drain.sessions) if (!session.closed) session.close();
  if (word === 'drain') for (const server of drain.servers) stopAccepting(server);
  reportConns(holder, drain.conns.size);
}

/** gsup's words, read on the report channel (never keeping the process alive): one, then no more. */
function hear(holder: Holder, drain: Drain): void {
  const fd = holder.held.reportFd;
  if (fd === undefined) return;
  let partial = '';
  const callback = (size: number, buffer: Buffer): boolean => {
    const lines = (partial + buffer.toString('utf8', 0, size)).split('\n');
    partial = lines.pop()!.slice(-256);
    const word = lines.map(parseTell).find((each) => each !== undefined);
    if (!word) return true;
    try {
      act(holder, drain, word);
    } catch (error) {
      say(`could not ${word === 'drain' ? 'drain' : 'close kept-alive connections'} (${String(error)})`);
    }
    return false; // the next word is another process's
  };
  const net = require('node:net') as typeof import('node:net');
  const onread = { buffer: Buffer.alloc(1024), callback };
  const channel = new net.Socket({ fd, readable: true, writable: false, onread } as never);
  channel.on('error', () => {});
  channel.once('close', () => (holder.unheard = true));
  channel.unref();
}
