import { constants } from 'node:fs';
import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { gsup } from '../helpers/gsup.js';

// gsup ends at once (_exit) when Node's own exit has nothing to put back (src/platform/linux/process/quick-exit.ts),
// and through Node's exit when it has: a command may leave O_NONBLOCK on a pipe it shares with gsup (a Node
// command that was killed before its own exit put it back), and the shell or CI runner after gsup reads that pipe.
const linux = process.platform === 'linux';
const F_GETFL = 3;

describe.skipIf(!linux)('the end of gsup', () => {
  const libc = linux ? koffi.load('libc.so.6') : undefined;
  const pipe = libc?.func('int pipe(_Out_ int *)');
  const fcntl = libc?.func('int fcntl(int, int, int)');
  const close = libc?.func('int close(int)');

  it('puts back O_NONBLOCK that a killed Node command left on stderr, a pipe it shares with gsup', async () => {
    const fds = [0, 0];
    expect(pipe!(fds)).toBe(0);
    const [read, write] = fds;
    try {
      const blocking = fcntl!(write, F_GETFL, 0);
      expect(blocking & constants.O_NONBLOCK).toBe(0);
      // Node makes a pipe's stdio non-blocking when the stream is made, and puts it back at its own exit.
      const script = "process.stderr; process.kill(process.pid, 'SIGKILL')";
      const run = gsup(['--', process.execPath, '-e', script], { stderr: write });
      expect((await run.finished()).code).toBe(137);
      expect(fcntl!(write, F_GETFL, 0)).toBe(blocking);
    } finally {
      close!(read);
      close!(write);
    }
  });
});
