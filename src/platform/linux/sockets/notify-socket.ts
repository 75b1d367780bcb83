import { mkdtempSync, read, rmSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, nativeFailure } from '../native.js';
import type { NotifySocket } from '../../types.js';

// systemd's sd_notify protocol: the app sends `READY=1` (and other
// assignments, one a line) as datagrams to the AF_UNIX SOCK_DGRAM socket
// named by $NOTIFY_SOCKET. Node has no such socket: it is made through
// koffi, and read with fs.read in libuv's pool (a blocking read: no CPU
// while it waits, nothing on the loop), armed again after each datagram.

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
// Not inherited by the command: it gets the path, never the fd.
const SOCK_CLOEXEC = 0o2000000;
const SHUT_RD = 0;
// sockaddr_un: sa_family_t, then sun_path[108] (its last byte the terminating NUL).
const SUN_PATH_MAX = 107;
const DATAGRAM_MAX = 4096;

/**
 * A notify socket in a private folder (0700: only gsup's user and root can
 * send to it), calling `heard` with each datagram's text. Returns why not as
 * a string. `close()` must come before the process exits: a read pending in
 * the pool would keep Node from exiting (shutdown(2) ends it).
 */
export function openNotifySocket(heard: (text: string) => void): NotifySocket | string {
  const native = load();
  if (!native) return `koffi could not be loaded (${nativeFailure()})`;
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'gsup-notify-'));
  } catch (error) {
    return `no private folder in ${tmpdir()} (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const path = join(dir, 'notify');
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const bytes = Buffer.from(path);
  if (bytes.length > SUN_PATH_MAX) {
    remove();
    return `its path would be ${bytes.length} bytes long, over ${SUN_PATH_MAX} (set TMPDIR shorter)`;
  }
  const fd = native.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    remove();
    return `socket(AF_UNIX, SOCK_DGRAM) failed (errno ${native.errno()})`;
  }
  const address = Buffer.alloc(2 + SUN_PATH_MAX + 1);
  if (endianness() === 'LE') address.writeUInt16LE(AF_UNIX, 0);
  else address.writeUInt16BE(AF_UNIX, 0);
  bytes.copy(address, 2);
  if (native.bind(fd, address, 2 + bytes.length + 1) !== 0) {
    const errno = native.errno();
    native.close(fd);
    remove();
    return `bind(${path}) failed (errno ${errno})`;
  }
  const buffer = Buffer.alloc(DATAGRAM_MAX);
  let open = true;
  let reading = false;
  const arm = () => {
    reading = true;
    read(fd, buffer, 0, buffer.length, null, (error, length) => {
      reading = false;
      // After close(): shutdown made the read return; the fd is closed now, by the one who waited for it.
      if (!open) return native.close(fd);
      if (error) return; // not a socket error the app can cause: stop listening, the fd is closed at close()
      // A datagram of 0 bytes reads as 0: nothing said, read on.
      if (length > 0) heard(buffer.toString('utf8', 0, length));
      arm();
    });
  };
  arm();
  const onExit = () => close();
  const close = () => {
    if (!open) return;
    open = false;
    process.removeListener('exit', onExit);
    native.shutdown(fd, SHUT_RD);
    if (!reading) native.close(fd);
    remove();
  };
  // An exit without close() (a crash): the pending read must still end, or Node would wait for it forever.
  process.on('exit', onExit);
  return { path, close };
}
