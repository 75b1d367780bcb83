import { describe, expect, it } from 'vitest';
import { PRINTER, gsup } from '../helpers/gsup.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// Every stop signal reaches the app (one that forces its exit on a second signal must get it), and the third
// received during one stop kills the tree at once: each case once per target mode.

const MODES = ['group', 'child', 'tree'] as const;

describe.each(MODES)('stop signals, --target %s', (mode) => {
  it('every stop signal reaches the app: SIGTERM, then SIGINT; the third kills the tree at once', async () => {
    const run = gsup(['--target', mode, '-t', '30s', '--', 'node', PRINTER, '--cleanup', '30000']);
    const pid = await run.ready();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    run.signal('SIGINT');
    await run.waitForLine(/^signal: SIGINT /);
    await run.waitForLine(/SIGINT received: second stop signal, forwarding it too/, { stream: 'stderr' });
    const sent = Date.now();
    run.signal('SIGTERM');
    const exit = await run.finished();
    expect(Date.now() - sent).toBeLessThan(3000);
    expect(exit.code).toBe(137);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    const stderr = run.stderr.join('\n');
    expect(stderr).toContain('SIGTERM received: third stop signal, killing the tree now');
    expect(stderr).toMatch(new RegExp(`1 killed: ${pid} \\(node .*printer\\.js`));
    expect(isAlive(pid)).toBe(false);
  });

  it('an app that forces its exit on a second signal gets it, and its status is gsup’s', async () => {
    const run = gsup(['--target', mode, '-t', '30s', '--', 'node', PRINTER, '--cleanup', '30000', '--force-on-second']);
    await run.ready();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    run.signal('SIGTERM');
    const exit = await run.finished();
    expect(run.count(/^forced exit /)).toBe(1);
    expect(run.count(/^signal: SIGTERM /)).toBe(2);
    expect(exit.code).toBe(1);
    expect(run.stderr.join('\n')).toMatch(/stopped in .*: 1 exited by themselves, 0 killed/);
  });

  it('-r TERM:INT, then SIGINT: the app gets SIGINT twice, and no SIGTERM', async () => {
    const run = gsup(['--target', mode, '-r', 'TERM:INT', '-t', '30s', '--', 'node', PRINTER, '--cleanup', '30000']);
    await run.ready();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGINT /);
    run.signal('SIGINT');
    await waitFor(() => run.count(/^signal: SIGINT /) === 2, 'the second SIGINT');
    run.signal('SIGINT');
    expect((await run.finished()).code).toBe(137);
    expect(run.count(/^signal: SIGINT /)).toBe(2);
    expect(run.count(/^signal: SIGTERM /)).toBe(0);
  });
});

describe('stop signals during --stop-delay', () => {
  it('the second ends the wait and the stop signal goes out once; the third kills', async () => {
    const run = gsup(['--stop-delay', '20s', '-t', '30s', '--', 'node', PRINTER, '--cleanup', '30000']);
    await run.ready();
    run.signal('SIGTERM');
    await run.waitForLine(/waiting 20\.00s before forwarding SIGTERM/, { stream: 'stderr' });
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    await run.waitForLine(/second stop signal, forwarding SIGTERM now/, { stream: 'stderr' });
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(137);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
  });
});
