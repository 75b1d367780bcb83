import { close, open, read } from 'node:fs';
import type { EnvironRead } from '../types.js';
import { readProcFile } from './proc-read.js';

// An environment larger than this is not searched further.
const MAX_BYTES = 1 << 20;
// Most environments fit in one read of this size, into a buffer used again (PID 1 reads one per orphan).
const CHUNK = 64 * 1024;
// Buffers kept for the next reads: as many as the reads that run at once (provenance.ts: four).
const POOL = 4;

const ABSENT: EnvironRead = { found: 'absent' };
const GONE: EnvironRead = { found: 'gone' };
const free: Buffer[] = [];
const names = new Map<string, Buffer>();

type Errno = NodeJS.ErrnoException | null;

/**
 * The value of `name` in the environment a process was started with
 * (/proc/PID/environ), read asynchronously (the read waits for the
 * process's memory, which a process in `D` state can hold). Tells a readable
 * environment without it (`absent`) from one gsup may not read
 * (`unreadable`: another user's process, and gsup without CAP_SYS_PTRACE)
 * and from a process that is gone.
 */
export function environValue(pid: number, name: string): Promise<EnvironRead> {
  return new Promise((resolve) =>
    open(`/proc/${pid}/environ`, 'r', (error, fd) => {
      if (error) return resolve(failure(error));
      // A read that never answers (a process in `D` state) keeps its buffer: the pool lends another.
      const buffer = free.pop() ?? Buffer.allocUnsafe(CHUNK);
      read(fd, buffer, 0, CHUNK, 0, (readError, length) => {
        const done = (result: EnvironRead) => {
          if (free.length < POOL) free.push(buffer);
          close(fd, () => resolve(result));
        };
        if (readError) return done(failure(readError));
        // Larger than one chunk (rare): read whole, once, the plain way.
        if (length === CHUNK) return void readLarge(pid, name).then(done);
        done(search(buffer, length, name));
      });
    }),
  );
}

async function readLarge(pid: number, name: string): Promise<EnvironRead> {
  const text = await readProcFile(`/proc/${pid}/environ`, MAX_BYTES);
  return text ? search(text, text.length, name) : GONE;
}

/** Why a read failed: a process gone, one gsup may not read, or a failure of the moment (no fd left). */
function failure(error: Errno): EnvironRead {
  const code = error?.code;
  if (code === 'ENOENT' || code === 'ESRCH') return GONE;
  if (code === 'EACCES' || code === 'EPERM') return { found: 'unreadable', why: code };
  return { found: 'failed', why: code ?? String(error) };
}

/** `name`'s value among the NUL-separated entries of `text` (its first `length` bytes), allocating only the value. */
function search(text: Buffer, length: number, name: string): EnvironRead {
  let wanted = names.get(name);
  if (!wanted) names.set(name, (wanted = Buffer.from(`${name}=`, 'latin1')));
  for (let start = 0; start < length;) {
    const end = text.indexOf(0, start);
    const stop = end < 0 || end > length ? length : end;
    if (stop - start >= wanted.length && wanted.compare(text, start, start + wanted.length) === 0)
      return { found: 'value', value: text.toString('latin1', start + wanted.length, stop) };
    start = stop + 1;
  }
  return ABSENT;
}
