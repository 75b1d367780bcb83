import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixture, gsup } from '../helpers/gsup.js';
import { readProc, waitFor } from '../helpers/proc.js';

// Alone, after the rest: while the fixture lives, anyone's read of its command line (ps, a test that reads every
// process's) waits seconds.

describe.skipIf(process.getuid?.() !== 0 || !existsSync('/dev/fuse'))(
  'a process whose command line cannot be read (D state, a hung FUSE mount)',
  () => {
    it('neither a forwarded signal nor the stop waits for its command line', async () => {
      // The command is stuck for 3 s at a time (fixtures/stuck-cmdline.js); an app in its group prints what it gets.
      const run = gsup(['-v', '--', 'node', fixture('stuck-cmdline.js')]);
      await run.ready('app');
      const stuck = Number((await run.waitForLine(/^stuck \(pid: (\d+)\)$/))[1]);
      await waitFor(() => readProc(stuck)?.state === 'D', 'the command to be stuck');
      const forwarded = Date.now();
      run.signal('SIGUSR1');
      await run.waitForLine(/^signal: SIGUSR1 \(pid: \d+, app\)$/);
      expect(Date.now() - forwarded, run.transcript()).toBeLessThan(1500);
      await waitFor(() => readProc(stuck)?.state === 'D', 'the command to be stuck again');
      const stopped = Date.now();
      run.signal('SIGTERM');
      await run.waitForLine(/^signal: SIGTERM \(pid: \d+, app\)$/);
      expect(Date.now() - stopped, run.transcript()).toBeLessThan(1500);
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.count(/^signal: SIGUSR1 /)).toBe(1);
      expect(run.count(/^signal: SIGTERM /)).toBe(1);
    });
  },
);
