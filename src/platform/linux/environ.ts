import { readProcFile } from './proc-read.js';

// An environment larger than this is not searched further.
const MAX_BYTES = 1 << 20;

/**
 * The value of `name` in the environment a process was started with
 * (/proc/PID/environ), read asynchronously (the read waits for the
 * process's memory, which a process in `D` state can hold). Undefined when
 * it has none, or it cannot be read (gone, another user's, a zombie).
 */
export async function environValue(pid: number, name: string): Promise<string | undefined> {
  const text = await readProcFile(`/proc/${pid}/environ`, MAX_BYTES);
  if (!text) return undefined;
  const wanted = Buffer.from(`${name}=`, 'latin1');
  for (let start = 0; start < text.length;) {
    const end = text.indexOf(0, start);
    const stop = end < 0 ? text.length : end;
    if (stop - start >= wanted.length && text.subarray(start, start + wanted.length).equals(wanted)) {
      return text.toString('latin1', start + wanted.length, stop);
    }
    start = stop + 1;
  }
  return undefined;
}
