import type { Logger } from '../../output/log.js';
import type { BoundSocket, HeldSocketCalls, ListenSpec, Platform } from '../../platform/index.js';
import { shownSpec, specsOf, type ListenAddress } from './address.js';
import type { Adopted } from './handed.js';
import { listenIdEntry } from './wire.js';

/** One held socket: its name, where it listens, and its fd while gsup has one that listens there. */
interface Held {
  readonly name: string;
  readonly spec: ListenSpec;
  /** Undefined once lost for good (its port taken by another) or shut down. */
  bound: BoundSocket | undefined;
  shut: boolean;
  /** The fd gsup was handed this socket at (handed.ts), while it holds that one: whoever handed it owns its end. */
  handed?: number;
}

/**
 * The listening sockets gsup holds for its whole life (--listen): bound before the first spawn, never
 * accepted on (the fds are plain numbers, outside libuv's loop), handed to every run at fds 3…,
 * checked before each spawn and after each run (any holder can shutdown() one), shut down at the end.
 */
export class HeldSockets {
  private constructor(
    private readonly calls: HeldSocketCalls,
    private readonly held: Held[],
  ) {}

  /**
   * Binds and listens on each address, in order, but where a socket was handed to gsup for it (`handed`, by
   * index: handed.ts); or one line on what could not be had (nothing kept).
   */
  static bind(
    addresses: readonly ListenAddress[],
    platform: Platform,
    handed: ReadonlyMap<number, Adopted> = new Map(),
  ): HeldSockets | string {
    const calls = platform.sockets;
    if (!calls) return '--listen: gsup cannot hold sockets on this system';
    const held: Held[] = [];
    for (const [index, address] of addresses.entries()) {
      const adopted = handed.get(index);
      if (adopted) {
        held.push({ name: address.name, spec: adopted.spec, bound: adopted.socket, shut: false, handed: adopted.fd });
        continue;
      }
      const bound = bindFirst(calls, specsOf(address));
      if ('errno' in bound) {
        for (const socket of held) if (socket.bound) calls.close(socket.bound.fd);
        return cannot(calls, address.name, bound.spec, bound);
      }
      held.push({ name: address.name, spec: bound.spec, bound: bound.socket, shut: false });
    }
    return new HeldSockets(calls, held);
  }

  /** Each socket's name, in fd order. */
  get names(): string[] {
    return this.held.map((socket) => socket.name);
  }

  /** Each held socket's fd, in order (for fds 3…); undefined for one lost (shut sockets are never handed). */
  fds(): Array<number | undefined> {
    return this.held.map((socket) => socket.bound?.fd);
  }

  /** GSUP_LISTEN_ID's value: `DEV:INO@ADDRESS` per fd (wire.ts). */
  id(): string {
    const entry = ({ bound, spec }: (typeof this.held)[number]) =>
      listenIdEntry({ dev: String(bound?.dev ?? 0), ino: String(bound?.ino ?? 0), address: shownSpec(spec) });
    return this.held.map(entry).join(',');
  }

  /** Inode → name of each socket gsup holds now (to tell who takes one: socket-takers.ts). */
  inodes(): Map<number, string> {
    return new Map(this.held.flatMap(({ bound, name }) => (bound ? [[bound.ino, name] as const] : [])));
  }

  /** What `-v` says at start: each socket, where, and its backlog. */
  describe(logger: Logger): void {
    for (const { name, spec, bound, handed } of this.held) {
      const from = handed === undefined ? '' : `, handed to gsup at fd ${handed}`;
      logger.info('listen', `holding ${name} on ${shownSpec(spec)} (backlog ${bound?.backlog}${from})`, {
        name,
        address: shownSpec(spec),
        backlog: bound?.backlog,
        handedFd: handed,
      });
    }
  }

  /**
   * Is each socket still listening on its address? One that is not (a holder called shutdown(), so a
   * listen on it would take a random port) is bound anew, with one warning naming `when` (`after run 2`).
   * Returns the names that cannot be had again (the port taken meanwhile).
   */
  check(when: string, logger: Logger): string[] {
    const lost: string[] = [];
    for (const socket of this.held) {
      if (socket.shut || (socket.bound && this.calls.listening(socket.bound.fd, socket.spec))) continue;
      const where = `${socket.name} (${shownSpec(socket.spec)})`;
      const was = socket.bound;
      if (was) this.calls.close(was.fd);
      socket.handed = undefined;
      const bound = this.calls.listen(socket.spec);
      if (!('errno' in bound)) {
        socket.bound = bound;
        if (was) logger.warn('listen-lost', `the held socket ${where} was no longer listening ${when}: bound again`);
        continue;
      }
      socket.bound = undefined;
      lost.push(socket.name);
      if (was) {
        const message = `the held socket ${where} was no longer listening ${when}, and cannot be bound again`;
        logger.warn('listen-lost', `${message}: ${bound.step} failed (${bound.errno})`);
      }
    }
    return lost;
  }

  /**
   * Before a spawn that follows a run (its tree gone): each socket as the first run got it, blocking. A Node
   * run made it non-blocking, for every holder; a blocking accept(2) of the next run's would fail at once.
   * Never while another run may use a socket: a Node loop's accept on a blocking socket would hang.
   */
  fresh(): void {
    for (const { bound } of this.held) if (bound) this.calls.blocking(bound.fd);
  }

  /**
   * Shuts these down for every holder (new connections refused, the queued ones reset) and closes them, said at
   * -v with `why`'s reason. A handed one is only closed: it listens on for whoever handed it (systemd, a gsup around).
   */
  shut(names: readonly string[], why?: { reason: string; logger: Logger }): void {
    const said = { shut: [] as string[], closed: [] as string[] };
    for (const socket of this.held) {
      if (socket.shut || !names.includes(socket.name)) continue;
      socket.shut = true;
      const handed = socket.handed !== undefined;
      if (socket.bound && handed) this.calls.close(socket.bound.fd);
      else if (socket.bound) this.calls.shutDown(socket.bound.fd);
      socket.bound = undefined;
      (handed ? said.closed : said.shut).push(socket.name);
    }
    if (!why) return;
    const { reason, logger } = why;
    const say = (done: string[], what: string) => {
      if (done.length > 0)
        logger.info('listen-shut', `held socket(s) ${done.join(', ')} ${what}`, { names: done, reason });
    };
    say(said.shut, `shut down (${reason}): new connections are refused`);
    say(said.closed, `closed (${reason}): handed to gsup, they stay listening for whoever handed them`);
  }

  /** Connections waiting to be accepted, by name (the kernel's count), for /metrics. */
  queue(): Array<[string, number]> {
    return this.held.flatMap(({ name, bound }): Array<[string, number]> => {
      const queued = bound && this.calls.queued(bound.fd);
      return queued === undefined ? [] : [[name, queued]];
    });
  }
}

type Attempt = { socket: BoundSocket; spec: ListenSpec } | { step: string; errno: string; spec: ListenSpec };

/** The first spec that binds; every interface falls back to 0.0.0.0 only where the kernel has no IPv6. */
function bindFirst(calls: HeldSocketCalls, specs: readonly ListenSpec[]): Attempt {
  let attempt: Attempt | undefined;
  for (const spec of specs) {
    const bound = calls.listen(spec);
    if (!('errno' in bound)) return { socket: bound, spec };
    attempt = { ...bound, spec };
    if (bound.errno !== 'EAFNOSUPPORT' && bound.errno !== 'EADDRNOTAVAIL') break;
  }
  return attempt!;
}

/** One line on a socket that cannot be had. */
function cannot(calls: HeldSocketCalls, name: string, spec: ListenSpec, failed: { step: string; errno: string }) {
  const start = calls.unprivilegedPortStart();
  const why: Record<string, string> = {
    EADDRINUSE: 'the port is in use',
    EACCES:
      start !== undefined && spec.port < start
        ? `permission denied: ports below ${start} (ip_unprivileged_port_start) need root or CAP_NET_BIND_SERVICE`
        : 'permission denied',
    EADDRNOTAVAIL: 'no such address on this host',
    EINVAL: 'not an address of this family',
  };
  const cause =
    why[failed.errno] ?? (failed.step === 'koffi' ? failed.errno : `${failed.step} failed (${failed.errno})`);
  return `cannot hold ${name} on ${shownSpec(spec)} (--listen): ${cause}`;
}
