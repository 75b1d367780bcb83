import { open } from 'node:fs/promises';

// An environment larger than this is not searched further.
const MAX_BYTES = 1 << 20;
const CHUNK = 64 * 1024;

/**
 * The value of `name` in the environment a process was started with
 * (/proc/PID/environ), read asynchronously (the read waits for the
 * process's memory, which a process in `D` state can hold). Undefined when
 * it has none, or it cannot be read (gone, another user's, a zombie).
 */
export async function environValue(pid: number, name: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(`/proc/${pid}/environ`, 'r');
  } catch {
    return undefined;
  }
  try {
    const wanted = Buffer.from(`${name}=`, 'latin1');
    let text = Buffer.alloc(0);
    while (text.length < MAX_BYTES) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await handle.read(chunk, 0, CHUNK, text.length);
      if (bytesRead === 0) break;
      text = Buffer.concat([text, chunk.subarray(0, bytesRead)]);
    }
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf(0, start);
      const stop = end < 0 ? text.length : end;
      if (stop - start >= wanted.length && text.subarray(start, start + wanted.length).equals(wanted)) {
        return text.toString('latin1', start + wanted.length, stop);
      }
      start = stop + 1;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}
