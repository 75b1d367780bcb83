// Held sockets (--listen) as the engine and the platform speak of them: apart from types.ts, which the pure
// machine reads.

/** Where a held socket listens (--listen): a literal address of one family, a port; `dual`: `[::]` takes IPv4 too. */
export interface ListenSpec {
  readonly family: 4 | 6;
  readonly host: string;
  readonly port: number;
  readonly dual: boolean;
}

/** A listening socket gsup holds: its fd (close-on-exec), fstat's device and inode, its backlog. */
export interface BoundSocket {
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
  readonly backlog: number;
}

/** A socket handed to gsup at start (systemd's LISTEN_FDS): where it listens, as read from it, and its fd. */
export interface HandedSocket {
  readonly spec: ListenSpec;
  readonly socket: BoundSocket;
}

/** A run's report channel, gsup's end: read in the loop, written at once, let go. */
export interface Channel {
  write(text: string): void;
  close(): void;
}

/** Held sockets' system calls, outside libuv: gsup never accepts on them, and they stay out of its loop. */
export interface HeldSocketCalls {
  /** socket, SO_REUSEADDR (never SO_REUSEPORT), IPV6_V6ONLY as `dual` says, bind, listen(somaxconn); or why not. */
  listen(spec: ListenSpec): BoundSocket | { step: string; errno: string };
  /**
   * An fd handed to gsup: a listening TCP socket (SO_ACCEPTCONN) of IPv4 or IPv6, where it listens (getsockname;
   * `dual`: `[::]` without IPV6_V6ONLY), fstat's device and inode, its backlog; or what it is instead.
   */
  handed(fd: number): HandedSocket | string;
  /** Still listening (SO_ACCEPTCONN) on the address it was bound to (getsockname)? */
  listening(fd: number, spec: ListenSpec): boolean;
  /** Connections waiting to be accepted, the kernel's own count; undefined when unknown. */
  queued(fd: number): number | undefined;
  /**
   * Blocking again, as a fresh socket is: O_NONBLOCK belongs to the socket, not to an fd, and a Node run sets
   * it for every holder (a blocking accept(2) would then fail at once).
   */
  blocking(fd: number): void;
  /** shutdown(SHUT_RDWR), then close: every holder stops listening. */
  shutDown(fd: number): void;
  close(fd: number): void;
  /** An AF_UNIX stream socketpair, both ends close-on-exec; or why not. */
  pair(): [number, number] | string;
  /** A pair's end read in the loop, never keeping gsup alive: `heard` each piece of text, `ended` once at its end. */
  channel(fd: number, heard: (text: string) => void, ended: () => void): Channel;
  /** /proc/sys/net/ipv4/ip_unprivileged_port_start, when readable. */
  unprivilegedPortStart(): number | undefined;
}
