import { fstatSync } from 'node:fs';
import { endianness } from 'node:os';
import { errnoName, load, loadedLibrary, nativeFailure } from '../native.js';
import { readSmallRegularFile } from '../../small-file.js';
import type { HeldSocketCalls, ListenSpec } from '../../held-sockets.js';
import { openChannel } from './channel.js';

// Held sockets (--listen): TCP sockets bound and listening through libc, never through libuv, so that
// gsup never accepts on them and they stay out of its event loop. Bound here only where used: nothing
// of this costs a `gsup` without --listen. The constants are Linux's (x86, ARM, RISC-V alike).

const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_STREAM = 1;
// gsup's own fds pass to no child but where a spawn puts them (at fds 3…, where dup2 clears the flag).
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SO_REUSEADDR = 2;
const SO_TYPE = 3;
const SO_ACCEPTCONN = 30;
const SO_PROTOCOL = 38;
const IPPROTO_TCP = 6;
const IPPROTO_IPV6 = 41;
const IPV6_V6ONLY = 26;
const TCP_INFO = 11;
const SHUT_RDWR = 2;
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;
// struct tcp_info: eight one-byte fields, then u32s (rto, ato, snd_mss, rcv_mss, unacked): for a listening
// socket tcpi_unacked is its accept queue's length (sk_ack_backlog), tcpi_sacked its backlog.
const TCPI_UNACKED = 24;
const TCPI_SACKED = 28;
const TCP_INFO_SIZE = 104;

interface SocketLibc {
  socket: (domain: number, type: number, protocol: number) => number;
  setsockopt: (fd: number, level: number, name: number, value: Buffer, length: number) => number;
  getsockopt: (fd: number, level: number, name: number, value: Buffer, length: Buffer) => number;
  bind: (fd: number, address: Buffer, length: number) => number;
  listen: (fd: number, backlog: number) => number;
  getsockname: (fd: number, address: Buffer, length: Buffer) => number;
  shutdown: (fd: number, how: number) => number;
  close: (fd: number) => number;
  socketpair: (domain: number, type: number, protocol: number, fds: Buffer) => number;
  fcntl: (fd: number, command: number, arg: number) => number;
  inetPton: (family: number, text: string, address: Buffer) => number;
  inetNtop: (family: number, address: Buffer, text: Buffer, length: number) => unknown;
  errno: () => number;
}

let calls: SocketLibc | undefined;

function bindCalls(): SocketLibc | string {
  if (calls) return calls;
  const native = load();
  const loaded = loadedLibrary();
  if (!native || !loaded) return `koffi could not be loaded (${nativeFailure()})`;
  const { lib } = loaded;
  // What libc's first load bound already (socket, bind, shutdown, close, fcntl) is used as it is.
  const { socket, bind, shutdown, close, fcntl, errno } = native;
  calls = {
    socket,
    setsockopt: lib.func('int setsockopt(int, int, int, const void *, uint32_t)'),
    getsockopt: lib.func('int getsockopt(int, int, int, void *, void *)'),
    bind,
    listen: lib.func('int listen(int, int)'),
    getsockname: lib.func('int getsockname(int, void *, void *)'),
    shutdown,
    close,
    socketpair: lib.func('int socketpair(int, int, int, void *)'),
    fcntl,
    inetPton: lib.func('int inet_pton(int, const char *, void *)'),
    inetNtop: lib.func('void *inet_ntop(int, const void *, void *, uint32_t)'),
    errno,
  };
  return calls;
}

// In the machine's own byte order: what C's int and socklen_t are.
const LE = endianness() === 'LE';
const readInt = (buffer: Buffer, offset = 0) => (LE ? buffer.readInt32LE(offset) : buffer.readInt32BE(offset));
const intBuffer = (value: number) => {
  const buffer = Buffer.alloc(4);
  if (LE) buffer.writeInt32LE(value);
  else buffer.writeInt32BE(value);
  return buffer;
};
const one = intBuffer(1);
const zero = intBuffer(0);

/** sockaddr_in or sockaddr_in6 for a literal address; undefined when it is not one of that family. */
function sockaddr(libc: SocketLibc, spec: ListenSpec): Buffer | undefined {
  const six = spec.family === 6;
  const address = Buffer.alloc(six ? 28 : 16);
  if (LE) address.writeUInt16LE(six ? AF_INET6 : AF_INET, 0);
  else address.writeUInt16BE(six ? AF_INET6 : AF_INET, 0);
  address.writeUInt16BE(spec.port, 2);
  const bytes = Buffer.alloc(six ? 16 : 4);
  if (libc.inetPton(six ? AF_INET6 : AF_INET, spec.host, bytes) !== 1) return undefined;
  bytes.copy(address, six ? 8 : 4);
  return address;
}

function setOption(libc: SocketLibc, fd: number, level: number, name: number, on: boolean): boolean {
  return libc.setsockopt(fd, level, name, on ? one : zero, 4) === 0;
}

function intOption(libc: SocketLibc, fd: number, level: number, name: number, size = 4): Buffer | undefined {
  const value = Buffer.alloc(size);
  const length = intBuffer(size);
  return libc.getsockopt(fd, level, name, value, length) === 0 ? value : undefined;
}

/** The kernel's own limit of a listen queue (somaxconn, per network namespace); 4096 when unreadable. */
function somaxconn(): number {
  const value = Number(readSmallRegularFile('/proc/sys/net/core/somaxconn', 64)?.trim());
  return Number.isInteger(value) && value > 0 ? value : 4096;
}

/** Where a listening socket is bound (getsockname), as a spec; or why it is no IPv4 or IPv6 socket. */
function boundSpec(libc: SocketLibc, fd: number): ListenSpec | string {
  const address = Buffer.alloc(28);
  const length = intBuffer(address.length);
  if (libc.getsockname(fd, address, length) !== 0) return `getsockname failed (${errnoName(libc.errno())})`;
  const domain = LE ? address.readUInt16LE(0) : address.readUInt16BE(0);
  if (domain !== AF_INET && domain !== AF_INET6) return 'no IPv4 or IPv6 socket';
  const six = domain === AF_INET6;
  const bytes = six ? address.subarray(8, 24) : address.subarray(4, 8);
  const text = Buffer.alloc(64);
  if (!libc.inetNtop(domain, bytes, text, text.length)) return `inet_ntop failed (${errnoName(libc.errno())})`;
  const host = text.toString('latin1', 0, text.indexOf(0));
  // IPV6_V6ONLY matters for the unspecified address alone: `[::]` takes IPv4 too without it.
  const v6only = six && bytes.every((byte) => byte === 0) ? intOption(libc, fd, IPPROTO_IPV6, IPV6_V6ONLY) : undefined;
  const dual = v6only !== undefined && readInt(v6only) === 0;
  return { family: six ? 6 : 4, host, port: address.readUInt16BE(2), dual };
}

export const heldSocketCalls: HeldSocketCalls = {
  handed(fd) {
    const libc = bindCalls();
    if (typeof libc === 'string') return libc;
    let stat: ReturnType<typeof fstatSync>;
    try {
      stat = fstatSync(fd);
    } catch {
      return 'not open';
    }
    if (!stat.isSocket()) return 'no socket';
    const type = intOption(libc, fd, SOL_SOCKET, SO_TYPE);
    const protocol = intOption(libc, fd, SOL_SOCKET, SO_PROTOCOL);
    if (!type || !protocol || readInt(type) !== SOCK_STREAM || readInt(protocol) !== IPPROTO_TCP)
      return 'no TCP socket';
    const accepting = intOption(libc, fd, SOL_SOCKET, SO_ACCEPTCONN);
    if (!accepting || readInt(accepting) !== 1) return 'not listening';
    const spec = boundSpec(libc, fd);
    if (typeof spec === 'string') return spec;
    // For a listening socket tcpi_sacked is its backlog, as listen(2) set it (capped at somaxconn).
    const info = intOption(libc, fd, IPPROTO_TCP, TCP_INFO, TCP_INFO_SIZE);
    const backlog = info ? readInt(info, TCPI_SACKED) : 0;
    return { spec, socket: { fd, dev: stat.dev, ino: stat.ino, backlog } };
  },
  listen(spec) {
    const libc = bindCalls();
    if (typeof libc === 'string') return { step: 'koffi', errno: libc };
    const address = sockaddr(libc, spec);
    if (!address) return { step: 'inet_pton', errno: 'EINVAL' };
    const fd = libc.socket(spec.family === 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return { step: 'socket', errno: errnoName(libc.errno()) };
    const fail = (step: string) => {
      const errno = errnoName(libc.errno());
      libc.close(fd);
      return { step, errno };
    };
    if (!setOption(libc, fd, SOL_SOCKET, SO_REUSEADDR, true)) return fail('setsockopt(SO_REUSEADDR)');
    // Set either way: the system's default (net.ipv6.bindv6only) must not decide whether IPv4 comes too.
    if (spec.family === 6 && !setOption(libc, fd, IPPROTO_IPV6, IPV6_V6ONLY, !spec.dual))
      return fail('setsockopt(IPV6_V6ONLY)');
    if (libc.bind(fd, address, address.length) !== 0) return fail('bind');
    const backlog = somaxconn();
    if (libc.listen(fd, backlog) !== 0) return fail('listen');
    const { dev, ino } = fstatSync(fd);
    return { fd, dev, ino, backlog };
  },
  listening(fd, spec) {
    const libc = bindCalls();
    if (typeof libc === 'string') return false;
    const accepting = intOption(libc, fd, SOL_SOCKET, SO_ACCEPTCONN);
    if (!accepting || readInt(accepting) !== 1) return false;
    // shutdown() by any holder ends the listening and lets the port go: a listen() after it takes a random port.
    const expected = sockaddr(libc, spec);
    const address = Buffer.alloc(28);
    const length = intBuffer(address.length);
    if (!expected || libc.getsockname(fd, address, length) !== 0) return false;
    const same = (from: number, to: number) => address.subarray(from, to).equals(expected.subarray(from, to));
    return spec.family === 6 ? same(0, 4) && same(8, 24) : same(0, 8);
  },
  queued(fd) {
    const libc = bindCalls();
    if (typeof libc === 'string') return undefined;
    const info = intOption(libc, fd, IPPROTO_TCP, TCP_INFO, TCP_INFO_SIZE);
    return info && readInt(info, TCPI_UNACKED);
  },
  blocking(fd) {
    const libc = bindCalls();
    if (typeof libc === 'string') return;
    const flags = libc.fcntl(fd, F_GETFL, 0);
    if (flags >= 0 && flags & O_NONBLOCK) libc.fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  },
  shutDown(fd) {
    const libc = bindCalls();
    if (typeof libc === 'string') return;
    // Every holder's listening ends with it (a wrapper shell's, a stray child's): new connections are refused,
    // and those still queued are reset by the kernel.
    libc.shutdown(fd, SHUT_RDWR);
    libc.close(fd);
  },
  close(fd) {
    const libc = bindCalls();
    if (typeof libc !== 'string') libc.close(fd);
  },
  pair() {
    const libc = bindCalls();
    if (typeof libc === 'string') return libc;
    const fds = Buffer.alloc(8);
    if (libc.socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) !== 0)
      return `socketpair failed (${errnoName(libc.errno())})`;
    return [readInt(fds, 0), readInt(fds, 4)];
  },
  channel: openChannel,
  unprivilegedPortStart() {
    const value = Number(readSmallRegularFile('/proc/sys/net/ipv4/ip_unprivileged_port_start', 64)?.trim());
    return Number.isInteger(value) ? value : undefined;
  },
};
