import { constants, fstatSync, openSync, writeSync, type Stats } from 'node:fs';
import { loadKoffi, loadLibc } from '../koffi.js';
import { raisedOwnSigpipe } from '../../sigpipe.js';

// How gsup writes its log lines to stderr without ever waiting for the
// reader. fd 2's open file description is shared with the command, so
// O_NONBLOCK on it would make the app's own writes fail (EAGAIN) instead of
// wait: gsup never sets it there. Instead, by what stderr is:
// - a file or a disk: a plain write (it waits for no reader);
// - a pipe or a terminal: reopened through /proc (a description of gsup's
//   own on the same pipe or terminal), non-blocking;
// - a socket (journald, a Node parent's stdio): send(2) with MSG_DONTWAIT,
//   per call, and MSG_NOSIGNAL;
// - a pipe gsup may not reopen (another user's): pwritev2(2) with
//   RWF_NOWAIT, per call (pipes take it since Linux 6.4);
// - else (no koffi, an older kernel, not Linux): a plain write, which waits.

/** Puts bytes on stderr: how many it took; throws (code EAGAIN) rather than wait. */
export type Put = (data: Buffer) => number;

const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const RWF_NOWAIT = 8;
const CODES: Record<number, string> = { 4: 'EAGAIN', 11: 'EAGAIN', 32: 'EPIPE', 38: 'ENOSYS', 95: 'EOPNOTSUPP' };

/** The way to write to `fd` (stderr) that waits least, chosen once. */
export function stderrPut(fd = 2): Put {
  let stat: Stats;
  try {
    stat = fstatSync(fd);
  } catch {
    return plainWrite(fd); // closed: the first write fails, and the log falls silent
  }
  if (process.platform !== 'linux' || stat.isFile() || stat.isBlockDevice()) return plainWrite(fd);
  if (stat.isFIFO() || stat.isCharacterDevice()) {
    const own = reopen(fd);
    if (own !== undefined) return plainWrite(own);
  }
  return nativePut(fd, stat.isSocket()) ?? plainWrite(fd);
}

/** write(2): EPIPE raises SIGPIPE in gsup, counted as its own. */
function plainWrite(fd: number): Put {
  return (data) => {
    try {
      return writeSync(fd, data);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') raisedOwnSigpipe();
      throw error;
    }
  };
}

/**
 * A new open file description of the same pipe or terminal: O_NONBLOCK on it
 * is gsup's alone. O_NOCTTY: a session leader with no terminal (PID 1) must
 * not get this one as its controlling terminal by opening it.
 */
function reopen(fd: number): number | undefined {
  try {
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined; // no /proc; another user's pipe (EACCES); no reader left (ENXIO)
  }
}

function nativePut(fd: number, socket: boolean): Put | undefined {
  if (process.env.GSUP_FFI === '0') return undefined;
  try {
    const koffi = loadKoffi(import.meta.url);
    const libc = loadLibc(koffi);
    const failed = (result: number, raisesSigpipe: boolean): number => {
      if (result >= 0) return result;
      const errno = koffi.errno();
      const code = CODES[errno] ?? `errno ${errno}`;
      if (code === 'EPIPE' && raisesSigpipe) raisedOwnSigpipe();
      throw Object.assign(new Error(`write to stderr: ${code}`), { code });
    };
    if (socket) {
      type Send = (fd: number, data: Buffer, length: number, flags: number) => number;
      const send = libc.func('send', 'long', ['int', 'void *', 'size_t', 'int']) as Send;
      return (data) => failed(send(fd, data, data.length, MSG_DONTWAIT | MSG_NOSIGNAL), false);
    }
    const iovec = koffi.pointer(koffi.struct({ base: 'void *', length: 'size_t' }));
    type Iovec = { base: Buffer; length: number };
    type Pwritev2 = (fd: number, iov: Iovec[], count: number, offset: bigint, flags: number) => number;
    const pwritev2 = libc.func('pwritev2', 'long', ['int', iovec, 'int', 'int64_t', 'int']) as Pwritev2;
    let fallback: Put | undefined;
    return (data) => {
      if (fallback) return fallback(data);
      try {
        return failed(pwritev2(fd, [{ base: data, length: data.length }], 1, -1n, RWF_NOWAIT), true);
      } catch (error) {
        const { code } = error as NodeJS.ErrnoException;
        if (code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
        fallback = plainWrite(fd); // a kernel whose pipes do not take RWF_NOWAIT (before 6.4)
        return fallback(data);
      }
    };
  } catch {
    return undefined;
  }
}
