import { open } from 'node:fs/promises';

const CHUNK = 64 * 1024;

/**
 * The first `maxBytes` of a /proc file, read asynchronously: a read of a
 * process's memory (cmdline, environ) waits for that process, and one in
 * `D` state can hold it. Undefined when it cannot be read (gone, another
 * user's).
 */
export async function readProcFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks);
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}
