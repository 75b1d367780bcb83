import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GSUP, PRINTER, Run, gsup, tempDir } from '../helpers/gsup.js';

// A stderr that does not drain (Docker's blocking log mode behind a stalled
// driver, a terminal in XOFF) must never hold back a signal: gsup's lines
// wait, or are counted as lost, and the stop goes on as tini's would.

const hasPython = (() => {
  try {
    execFileSync('python3', ['-c', 'pass'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// Fills a pipe (or a socket pair) until it takes no more, gives it back its
// blocking mode, makes it fd 2, and execs gsup. The read end is left open
// in gsup (inheritable), and nobody ever reads it: full, but no EPIPE.
const FULL_STDERR = `
import fcntl, os, socket, sys
if sys.argv[1] == 'pipe':
    r, w = os.pipe()
else:
    a, b = socket.socketpair()
    r, w = a.detach(), b.detach()
flags = fcntl.fcntl(w, fcntl.F_GETFL)
fcntl.fcntl(w, fcntl.F_SETFL, flags | os.O_NONBLOCK)
try:
    while True:
        os.write(w, b'filler!\\n' * 64)
except BlockingIOError:
    pass
fcntl.fcntl(w, fcntl.F_SETFL, flags)
os.set_inheritable(r, True)
os.dup2(w, 2)
os.execv(sys.argv[2], sys.argv[2:])
`;

describe('a stderr that does not drain', () => {
  const full = 'full before gsup starts (a %s): SIGTERM reaches the app at once, exactly once, and gsup exits';
  it.skipIf(!hasPython).each(['pipe', 'socket'])(full, async (kind) => {
    const run = new Run('python3', ['-c', FULL_STDERR, kind, process.execPath, GSUP, '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGTERM'); // gsup's "SIGTERM received" meets the full stderr
    await run.waitForLine(/^signal: SIGTERM /, { timeoutMs: 3000 });
    const exit = await run.finished(5000); // after waiting a second at most for its last lines
    expect(exit.code).toBe(0);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
  });

  it('lines wait while the pipe is full (256 at most), the rest are counted, all come out once it drains', async () => {
    const dir = tempDir();
    const fifo = join(dir.path, 'stderr');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const filler = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const stderr = openSync(fifo, constants.O_WRONLY); // blocking, as a log driver's pipe is
    try {
      for (;;) writeSync(filler, Buffer.from('filler!\n'.repeat(512)));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('EAGAIN');
    }
    closeSync(filler);
    let run: Run;
    try {
      run = gsup(['-v', '--', 'node', PRINTER], { stderr });
    } finally {
      closeSync(stderr);
    }
    await run.ready();
    // One forward line each: more than can wait. Each is sent once the last one arrived (none merge).
    const SIGNALS = 300;
    for (let sent = 1; sent <= SIGNALS; sent++) {
      run.signal('SIGUSR1');
      await until(
        () => run.count(/^signal: SIGUSR1 /) >= sent,
        () => run.transcript(),
      );
    }
    // Now the reader reads: what waited comes out, then the count of what was lost, then the stop.
    const lines: string[] = [];
    const socket = new Socket({ fd: reader, readable: true, writable: false });
    const ended = new Promise<void>((resolve) => socket.on('end', resolve));
    let partial = '';
    socket.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop()!;
      lines.push(...parts);
    });
    const lost = () => lines.findIndex((line) => /^\[gsup\] \d+ log lines lost \(stderr full\)$/.test(line));
    await until(
      () => lost() >= 0,
      () => lines.join('\n'),
    );
    run.signal('SIGTERM');
    expect((await run.finished(5000)).code).toBe(0);
    await ended;
    dir.remove();
    const own = lines.filter((line) => !line.startsWith('filler!'));
    expect(own.slice(0, 256).every((line) => line.startsWith('[gsup] ') && !/lost/.test(line))).toBe(true);
    expect(own[256]).toMatch(/^\[gsup\] \d+ log lines lost \(stderr full\)$/);
    const count = Number(/(\d+) log lines lost/.exec(own[256])![1]);
    const forwards = own.filter((line) => /^\[gsup\] SIGUSR1 → group \d+$/.test(line)).length;
    expect(forwards + count).toBeGreaterThanOrEqual(SIGNALS);
    const after = own.slice(257).join('\n');
    expect(after).toMatch(/^\[gsup\] SIGTERM received: stopping the tree[^]*\n\[gsup\] stopped in /m);
    expect(run.count(/^signal: SIGUSR1 /)).toBe(SIGNALS);
  });
});

/** Waits until `condition` holds, looking every millisecond or so; fails after `timeoutMs`, saying what it saw. */
async function until(condition: () => boolean, seen: () => string, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out; so far:\n${seen()}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
