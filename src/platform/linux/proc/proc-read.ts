import { close, open, read } from 'node:fs';

const CHUNK = 64 * 1024;

// node:fs's callbacks, not node:fs/promises: that module costs ~4 ms to load,
// and gsup reads /proc right after the spawn of every `gsup -- node app.js`.
const opened = (path: string) =>
  new Promise<number>((resolve, reject) => open(path, 'r', (error, fd) => (error ? reject(error) : resolve(fd))));
const readAt = (fd: number, chunk: Buffer, position: number) =>
  new Promise<number>((resolve, reject) =>
    read(fd, chunk, 0, chunk.length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
  );

/**
 * The first `maxBytes` of a /proc file, read asynchronously: a read of a
 * process's memory (cmdline, environ) waits for that process, and one in
 * `D` state can hold it. Undefined when it cannot be read (gone, another
 * user's).
 */
export async function readProcFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
  let fd: number;
  try {
    fd = await opened(path);
  } catch {
    return undefined;
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes - total));
      const bytesRead = await readAt(fd, chunk, total);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks);
  } catch {
    return undefined;
  } finally {
    await new Promise<void>((resolve) => close(fd, () => resolve()));
  }
}
