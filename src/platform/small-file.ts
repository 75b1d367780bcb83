import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * A small regular file's text, read so that nothing can block gsup: opened
 * non-blocking (a FIFO or a device answers at once), never through a symbolic
 * link (whoever can write beside the file must not point gsup elsewhere), and
 * read only when it is a regular file under `maxBytes`. Undefined otherwise.
 */
export function readSmallRegularFile(path: string, maxBytes: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size >= maxBytes) return undefined;
    const buffer = Buffer.alloc(maxBytes);
    return buffer.toString('latin1', 0, readSync(fd, buffer, 0, maxBytes, 0));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
