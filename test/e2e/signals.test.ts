import { describe, expect, it } from 'vitest';
import { PRINTER, gsup } from '../helpers/gsup.js';

describe('--rewrite', () => {
  it.each([['TERM:INT'], ['15:2'], ['SIGTERM:SIGINT']])('-r %s turns SIGTERM into SIGINT', async (rule) => {
    const run = gsup(['-r', rule, '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    expect(run.count(/^signal: SIGTERM /)).toBe(0);
  });

  it('-r WINCH:0 drops the signal', async () => {
    const run = gsup(['-v', '-r', 'WINCH:0', '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGWINCH');
    await run.waitForLine(/SIGWINCH received: dropped/, { stream: 'stderr' });
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 /);
    run.signal('SIGTERM');
    await run.finished();
    expect(run.count(/^signal: SIGWINCH /)).toBe(0);
    expect(run.count(/^signal: SIGUSR1 /)).toBe(1);
  });

  it('reads a comma list from GSUP_REWRITE', async () => {
    const run = gsup(['--', 'node', PRINTER], { env: { GSUP_REWRITE: 'USR1:USR2, HUP:0' } });
    await run.ready();
    run.signal('SIGHUP');
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR2 /);
    run.signal('SIGTERM');
    await run.finished();
    expect(run.count(/^signal: SIGUSR1 /)).toBe(0);
    expect(run.count(/^signal: SIGHUP /)).toBe(0);
    expect(run.count(/^signal: SIGUSR2 /)).toBe(1);
  });
});

// By default a real-time signal ends the process it reaches: outside PID 1 that was gsup, its tree left running.
describe('a real-time signal sent to gsup', () => {
  it.runIf(process.platform === 'linux')(
    'is said once, not forwarded (gsup forwards 1-31), and gsup runs on: a stop still ends the tree as usual',
    async () => {
      const run = gsup(['-vv', '--', 'node', PRINTER]);
      await run.ready();
      // Caught once the command has run a moment (AfterStart).
      await run.waitForLine(/real-time signals 3[45]-64 caught$/, { stream: 'stderr' });
      process.kill(run.pid, 40);
      await run.waitForLine(/signal 40 \(a real-time signal\) is not forwarded/, { stream: 'stderr' });
      process.kill(run.pid, 40);
      process.kill(run.pid, 64);
      await run.waitForLine(/signal 64 \(a real-time signal\) is not forwarded/, { stream: 'stderr' });
      run.signal('SIGTERM');
      // Not ended by signal 40 (gsup) nor its command (168): the printer's clean exit on SIGTERM.
      expect(await run.finished()).toEqual({ code: 0, signal: null });
      expect(run.count(/^signal: SIGTERM /)).toBe(1);
      expect(run.count(/^clean exit /)).toBe(1);
      expect(run.stderr.filter((line) => /signal 40 \(a real-time signal\)/.test(line))).toHaveLength(1);
    },
  );
});
