// What a process of a run was handed (engine/listen/wire.ts), read from its environment and checked against its
// fds. Pure but for the fstat it is given: the unit tests hand it a table.
import { FIRST_FD, LISTEN_FDNAMES, LISTEN_FDS, LISTEN_ID, REPORT_FD, parseListenIds } from '../engine/listen/wire.js';

// A process that trusts none of its fds keeps none of the contract's variables, nor do its children.
export { VARIABLES } from '../engine/listen/wire.js';

export interface HeldSocket {
  fd: number;
  dev: string;
  ino: string;
  /**
   * The held address as gsup bound and wrote it (`[::]:8080`, `127.0.0.1:9000`); its host is read only when the
   * app listens (take-over.ts: heldHost), not at every Node start of a run.
   */
  address: string;
  port: number;
  /** LISTEN_FDNAMES' entry: the word the report channel says. */
  name: string;
}

export interface Held {
  sockets: HeldSocket[];
  /** The run's report channel, when one was handed. */
  reportFd?: number;
}

/** What fstat says of an fd: undefined when it is not open. */
export type Fstat = (fd: number) => { dev: string; ino: string; socket: boolean } | undefined;

/**
 * The held sockets this environment names: undefined when it names none (no GSUP_LISTEN_ID: not gsup's, and
 * LISTEN_FDS, if any, is somebody else's business), a string saying why when it names them wrongly.
 */
export function readHeld(env: NodeJS.ProcessEnv): Held | string | undefined {
  const ids = env[LISTEN_ID];
  if (ids === undefined) return undefined;
  const count = Number(env[LISTEN_FDS]);
  const entries = parseListenIds(ids);
  if (!entries || !Number.isSafeInteger(count) || count < 1 || entries.length !== count) {
    return `${LISTEN_ID}=${ids} does not match ${LISTEN_FDS}=${env[LISTEN_FDS]}`;
  }
  const names = env[LISTEN_FDNAMES]?.split(':') ?? [];
  const sockets: HeldSocket[] = [];
  for (const [index, entry] of entries.entries()) {
    const port = portOf(entry.address);
    if (port === undefined) return `${LISTEN_ID} names no address in ${entry.address}`;
    const name = names[index] || String(port);
    sockets.push({ fd: FIRST_FD + index, dev: entry.dev, ino: entry.ino, address: entry.address, port, name });
  }
  const report = env[REPORT_FD];
  if (report === undefined) return { sockets };
  // The contract puts it right after the sockets: anything else is not written to.
  if (Number(report) !== FIRST_FD + count) return `${REPORT_FD}=${report} is not fd ${FIRST_FD + count}`;
  return { sockets, reportFd: FIRST_FD + count };
}

/** The port at the end of `ADDRESS:PORT` (1-65535), or undefined. */
function portOf(address: string): number | undefined {
  const digits = address.slice(address.lastIndexOf(':') + 1);
  const port = Number(digits);
  return String(port) === digits && port >= 1 && port <= 65535 ? port : undefined;
}

/** Why these fds are not the held sockets (and the report channel), or undefined when every one matches. */
export function mismatch(held: Held, fstat: Fstat): string | undefined {
  for (const socket of held.sockets) {
    const stat = fstat(socket.fd);
    if (!stat) return `fd ${socket.fd} is not open`;
    if (stat.dev !== socket.dev || stat.ino !== socket.ino || !stat.socket) {
      const what = stat.socket ? 'another socket' : 'no socket';
      const wanted = `${socket.dev}:${socket.ino}, ${socket.address}`;
      return `fd ${socket.fd} is ${what} (${stat.dev}:${stat.ino}, not ${wanted})`;
    }
  }
  if (held.reportFd !== undefined && !fstat(held.reportFd)?.socket) return `fd ${held.reportFd} is no socket`;
  return undefined;
}
