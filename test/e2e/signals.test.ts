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
