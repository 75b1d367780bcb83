// Taking over: a listen() on a held port becomes a listen on the held socket's fd.
import type { Server } from 'node:net';
import { parseAddress, placement, showAddress } from './address.js';
import { drainOf, watch } from './drain.js';
import type { HeldSocket } from './held.js';
import { fstat, report, say, type Holder } from './process.js';

export type Listen2 = (
  address: unknown,
  port: unknown,
  type: unknown,
  backlog: unknown,
  fd: unknown,
  flags: unknown,
) => void;
interface Handle {
  close: (...args: unknown[]) => unknown;
}

/**
 * gsup listens with the kernel's somaxconn, and Linux caps any larger backlog at somaxconn: the largest one leaves
 * the held socket's backlog as it is, with no read of /proc in the app.
 */
const BACKLOG = 0x7fffffff;

/**
 * The held socket a listen on `address:port` takes, if any: the one whose address it lies in (its very address
 * first). Undefined (left to Node) for other ports, port 0, another address, and a held socket this process
 * already took: Node cannot give one fd to two servers (the second gets Node's own EADDRINUSE, as two servers on
 * one port of one process would without gsup; after a close the fd is gone with the server that had it).
 */
function choose(holder: Holder, address: string | null, port: number): HeldSocket | undefined {
  const places = holder.held.sockets
    .filter((socket) => socket.port === port)
    .flatMap((socket) => {
      // gsup wrote it: an address that does not parse is held by no listen.
      const host = parseAddress(socket.address)?.host;
      return host === undefined ? [] : [{ socket, place: placement(address, host) }];
    })
    .filter(({ place }) => place !== 'outside')
    // One not taken yet first, then its very address.
    .map((found) => ({
      ...found,
      rank: (holder.taken.has(found.socket.fd) ? 2 : 0) + (found.place === 'same' ? 0 : 1),
    }))
    .sort((a, b) => a.rank - b.rank);
  if (places.length === 0) return undefined;
  const { socket, place } = places[0];
  const asked = showAddress(address, port);
  const held = `${socket.address} (${socket.name})`;
  const state = holder.taken.get(socket.fd);
  if (state) {
    const why = state === 'listening' ? 'another server of this process listens on it' : 'this process closed it';
    say(`listen on ${asked} left to Node: the held socket ${held} is taken (${why})`);
    return undefined;
  }
  const stat = fstat(socket.fd);
  if (stat?.dev !== socket.dev || stat.ino !== socket.ino) {
    say(`listen on ${asked} left to Node: fd ${socket.fd} is no longer the held socket ${held}`);
    return undefined;
  }
  if (place === 'inside') say(`listen on ${asked} takes the held socket ${held}: --listen decides exposure`);
  return socket;
}

/** After the take-over: gsup hears of it, and of the close that ends it. */
function took(holder: Holder, handle: Handle, socket: HeldSocket): void {
  holder.taken.set(socket.fd, 'listening');
  report(holder, 'listen', socket);
  const close = handle.close;
  handle.close = function (this: Handle, ...args: unknown[]) {
    handle.close = close;
    holder.taken.set(socket.fd, 'closed');
    report(holder, 'close', socket);
    return close.apply(this, args);
  };
}

/**
 * A cluster primary under NODE_CLUSTER_SCHED_POLICY=none makes the workers' handle through net's exported
 * `_createServerHandle` (shared_handle.js), and each worker then listens on it itself (with its own backlog).
 */
export function takeOverShared(holder: Holder, net: typeof import('node:net')): void {
  type Create = (address: unknown, port: unknown, type: unknown, fd: unknown, flags: unknown) => unknown;
  const exported = net as unknown as { _createServerHandle?: Create };
  const create = exported._createServerHandle;
  if (typeof create !== 'function') return;
  exported._createServerHandle = function (this: unknown, ...args: Parameters<Create>) {
    const [address, port, type, fd, flags] = args;
    let socket: HeldSocket | undefined;
    try {
      const plain = typeof fd !== 'number' && typeof port === 'number' && port > 0;
      if (plain) socket = choose(holder, typeof address === 'string' ? address : null, port);
    } catch {
      socket = undefined;
    }
    if (!socket) return create.apply(this, args);
    const handle = create.call(this, null, null, type, socket.fd, flags);
    if (typeof handle === 'object' && handle !== null) took(holder, handle as Handle, socket);
    // Its workers' connections are theirs: it answers gsup's word at once (no server of its own to drain).
    drainOf(holder);
    return handle;
  };
}

/**
 * Every listen of a net.Server (http, https, http2 and cluster's round-robin handle are ones) reaches
 * `Server.prototype._listen2` with its address resolved (null: every interface) and its port: the one place to
 * take it over. The fd goes in with the backlog positional, as `listen({ fd }, backlog)` would: in the options
 * Node drops it.
 */
export function takeOver(holder: Holder, listen2: Listen2): Listen2 {
  return function (this: Server & { _handle?: Handle | null }, ...args: Parameters<Listen2>) {
    const [address, port, type, , fd, flags] = args;
    let socket: HeldSocket | undefined;
    try {
      // A server that has a handle (a cluster worker's from the primary) or listens on an fd is not taken over.
      const plain = !this._handle && typeof fd !== 'number' && typeof port === 'number' && port > 0;
      if (plain) socket = choose(holder, typeof address === 'string' ? address : null, port);
    } catch {
      socket = undefined;
    }
    if (!socket) return listen2.apply(this, args);
    const result = listen2.call(this, null, null, type, BACKLOG, socket.fd, flags);
    if (this._handle) took(holder, this._handle, socket);
    watch(holder, this);
    return result;
  };
}
