import type { Logger } from '../../output/log.js';
import type { BoundSocket, HeldSocketCalls, ListenSpec, Platform } from '../../platform/index.js';
import { shownSpec, specsOf, type ListenAddress } from './address.js';
import { FIRST_FD, handedCount, LISTEN_FDNAMES, LISTEN_FDS } from './wire.js';

// Sockets handed to gsup itself, as systemd hands them (socket activation), or a gsup to the gsup it runs: fds
// 3… with LISTEN_FDS, LISTEN_PID (gsup's own pid, else they are not gsup's) and LISTEN_FDNAMES. One that a
// --listen names becomes that held socket instead of a new bind; the others are closed.

/** A socket handed to gsup: its fd, its name (LISTEN_FDNAMES), where it listens. */
interface Handed {
  readonly fd: number;
  readonly name: string | undefined;
  readonly spec: ListenSpec;
  readonly socket: BoundSocket;
}

/** A --listen's handed socket: the fd, and the address it listens on as that --listen says it. */
export interface Adopted {
  readonly spec: ListenSpec;
  readonly socket: BoundSocket;
  readonly fd: number;
}

/**
 * The --listen addresses' handed sockets, by index: by name first (LISTEN_FDNAMES), then by address. A handed
 * socket that names a --listen but listens elsewhere is a usage error (the line); any left over is closed, with
 * a warning each. Nothing handed: an empty map, and no system call.
 */
export function takeHanded(
  addresses: readonly ListenAddress[],
  platform: Platform,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  pid = process.pid,
): Map<number, Adopted> | string {
  const count = handedCount(env, pid);
  const calls = platform.sockets;
  const taken = new Map<number, Adopted>();
  if (count === 0 || !calls) return taken;
  const names = env[LISTEN_FDNAMES]?.split(':') ?? [];
  const handed: Handed[] = [];
  for (let index = 0; index < count; index++) {
    const fd = FIRST_FD + index;
    const found = calls.handed(fd);
    // Not closed: what is at that number now is no socket anyone handed (Node's own fds take freed numbers).
    if (typeof found === 'string') logger.warn('listen-handed', `${LISTEN_FDS}: fd ${fd} is ${found}: not used`);
    else handed.push({ fd, name: names[index] || undefined, ...found });
  }
  const used = new Set<Handed>();
  const take = (index: number, socket: Handed, spec: ListenSpec) => {
    taken.set(index, { spec, socket: socket.socket, fd: socket.fd });
    used.add(socket);
  };
  for (const [index, address] of addresses.entries()) {
    const named = handed.find((socket) => socket.name === address.name && !used.has(socket));
    if (!named) continue;
    const spec = fits(calls, named, address);
    if (!spec) {
      const wanted = specsOf(address).map(shownSpec).join(' or ');
      const where = `listens on ${shownSpec(named.spec)}, not on ${wanted} (--listen)`;
      return `the socket handed to gsup as ${address.name} (fd ${named.fd}) ${where}`;
    }
    take(index, named, spec);
  }
  for (const [index, address] of addresses.entries()) {
    if (taken.has(index)) continue;
    for (const socket of handed) {
      const spec = used.has(socket) ? undefined : fits(calls, socket, address);
      if (spec) {
        take(index, socket, spec);
        break;
      }
    }
  }
  for (const socket of handed) {
    if (used.has(socket)) continue;
    const what = `${socket.name === undefined ? '' : `${socket.name}, `}${shownSpec(socket.spec)}`;
    logger.warn('listen-handed', `${LISTEN_FDS}: the socket at fd ${socket.fd} (${what}) is no --listen's: closed`);
    calls.close(socket.fd);
  }
  return taken;
}

/** The spec of `address` that this socket listens on (the same bytes, port and dual-stack), or undefined. */
function fits(calls: HeldSocketCalls, socket: Handed, address: ListenAddress): ListenSpec | undefined {
  const { family, port, dual } = socket.spec;
  return specsOf(address).find(
    (spec) => spec.family === family && spec.port === port && spec.dual === dual && calls.listening(socket.fd, spec),
  );
}
