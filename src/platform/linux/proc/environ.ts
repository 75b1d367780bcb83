import { close, open, read } from 'node:fs';
import type { EnvironRead } from '../../types.js';
import { readProcFile } from './proc-read.js';

// An environment larger than this is not searched further.
const MAX_BYTES = 1 << 20;
// Most environments fit in one read of this size, into a buffer used again (PID 1 reads one per orphan).
const CHUNK = 64 * 1024;
// Buffers kept for the next reads: as many as the reads that run at once (provenance.ts: four).
const POOL = 4;

const ABSENT: EnvironRead = { found: 'absent' };
const GONE: EnvironRead = { found: 'gone' };
/** What a title written over argv left of the environment after it: no longer one, so no answer. */
export const OVERWRITTEN: EnvironRead = { found: 'unreadable', why: 'overwritten by its title' };
const EQUALS = 61;
const free: Buffer[] = [];
const names = new Map<string, Buffer>();

type Errno = NodeJS.ErrnoException | null;

/**
 * The value of `name` in the environment a process was started with
 * (/proc/PID/environ), read asynchronously (the read waits for the
 * process's memory, which a process in `D` state can hold). Tells a readable
 * environment without it (`absent`) from one gsup may not read
 * (`unreadable`: another user's process, and gsup without CAP_SYS_PTRACE; or
 * one no longer an environment, a title written over it: see overwritten)
 * and from a process that is gone.
 */
export function environValue(pid: number, name: string): Promise<EnvironRead> {
  return new Promise<EnvironRead | Buffer>((resolve) =>
    open(`/proc/${pid}/environ`, 'r', (error, fd) => {
      if (error) return resolve(failure(error));
      // A read that never answers (a process in `D` state) keeps its buffer: the pool lends another.
      const buffer = free.pop() ?? Buffer.allocUnsafe(CHUNK);
      read(fd, buffer, 0, CHUNK, 0, (readError, length) => {
        const done = (result: EnvironRead | Buffer) => {
          if (free.length < POOL) free.push(buffer);
          close(fd, () => resolve(result));
        };
        if (readError) return done(failure(readError));
        // Larger than one chunk (rare): read whole, once, the plain way.
        if (length === CHUNK) return void readLarge(pid, name).then(done);
        done(absentOr(search(buffer, length, name), buffer, length));
      });
    }),
  ).then<EnvironRead>((result) => (Buffer.isBuffer(result) ? overwritten(pid, result) : (result as EnvironRead)));
}

async function readLarge(pid: number, name: string): Promise<EnvironRead | Buffer> {
  const text = await readProcFile(`/proc/${pid}/environ`, MAX_BYTES);
  return text ? absentOr(search(text, text.length, name), text, text.length) : GONE;
}

/**
 * Without the variable (rare: a stranger, or a title written over it), and not empty (an empty environment, `env
 * -i`, is absent): its first entry, copied before the buffer goes back, for overwritten() to judge.
 */
function absentOr(found: EnvironRead, text: Buffer, length: number): EnvironRead | Buffer {
  if (found !== ABSENT || length === 0) return found;
  const end = text.indexOf(0);
  return Buffer.from(text.subarray(0, end < 0 || end > length ? length : end));
}

/**
 * An environment read without the variable: absent, or no longer an environment. A daemon that sets its title
 * by writing over its argv (perl's `$0`, nginx, php-fpm, redis, Python's setproctitle) writes over the environment
 * that follows it too: NULs or spaces, or the title's own end when it is longer than argv. So an environment whose
 * first entry is no NAME=value, or is the end of the command line (a title run on into it), is overwritten: its
 * mark cannot be read.
 */
async function overwritten(pid: number, first: Buffer): Promise<EnvironRead> {
  if (first.indexOf(EQUALS) < 1) return OVERWRITTEN;
  // The kernel reads a title that ran on past argv as one string, up to its first NUL (fs/proc/base.c).
  const title = await readProcFile(`/proc/${pid}/cmdline`, 4096);
  if (!title) return ABSENT;
  let end = title.length;
  while (end > 0 && title[end - 1] === 0) end--;
  const nul = title.indexOf(0);
  const one = nul < 0 || nul >= end;
  return one && end > first.length && title.subarray(end - first.length, end).equals(first) ? OVERWRITTEN : ABSENT;
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
