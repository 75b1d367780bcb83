import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup, leftovers } from '../helpers/gsup.js';

describe('--restart', () => {
  it('on-failure: a crash loop restarts with a growing delay, gives up at the limit, exits with the last status', async () => {
    const started = Date.now();
    const run = gsup([
      '--restart',
      'on-failure',
      '--max-restarts',
      '3',
      '--restart-delay',
      '100ms',
      '--',
      'sh',
      '-c',
      'echo run; exit 3',
    ]);
    const exit = await run.finished();
    expect(exit.code).toBe(3);
    expect(run.stdout).toEqual(['run', 'run', 'run', 'run']);
    expect(run.stderr).toEqual([
      '[gsup] command exited with code 3 (restart 1 of 3): restarting in 100ms',
      '[gsup] command exited with code 3 (restart 2 of 3): restarting in 200ms',
      '[gsup] command exited with code 3 (restart 3 of 3): restarting in 400ms',
      '[gsup] command exited with code 3; giving up after 3 restart(s) in a row',
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('a stop signal during the wait before a restart ends gsup at once, with the last status', async () => {
    const run = gsup(['--restart', 'on-failure', '--restart-delay', '20s', '--', 'sh', '-c', 'exit 4']);
    await run.waitForLine(/restarting in 20\.00s/, { stream: 'stderr' });
    const sent = Date.now();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(4);
    expect(Date.now() - sent).toBeLessThan(2000);
    expect(run.stderr.at(-1)).toBe('[gsup] SIGTERM received: no restart');
  });

  it('always: restarts after exit 0 too', async () => {
    const run = gsup([
      '--restart',
      'always',
      '--max-restarts',
      '2',
      '--restart-delay',
      '50ms',
      '--',
      'sh',
      '-c',
      'echo run; exit 0',
    ]);
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toEqual(['run', 'run', 'run']);
  });

  it('on-failure: not after exit 0, and not after a signal gsup forwarded', async () => {
    const clean = gsup(['--restart', 'on-failure', '--', 'sh', '-c', 'echo run; exit 0']);
    expect((await clean.finished()).code).toBe(0);
    expect(clean.stdout).toEqual(['run']);

    // sleep dies of the SIGHUP gsup forwarded: asked for, not a failure.
    const hup = gsup(['--restart', 'on-failure', '--', 'sh', '-c', `node ${PRINTER}; exit 0`]);
    await hup.ready();
    hup.signal('SIGHUP');
    expect((await hup.finished()).code).toBe(129);
    expect(hup.count(/^ready/)).toBe(1);
    expect(hup.count(/^signal: SIGHUP /)).toBe(1);
    expect(hup.stderr.join('\n')).not.toMatch(/restarting/);
  });

  it('a forwarded signal that ends the app: one line at the default level says which, that no restart follows, and the flag', async () => {
    // The app has no handler of its own for SIGHUP (it prints, then dies of it): as `podman kill --signal HUP`.
    const run = gsup(['--restart', 'on-failure', '--', 'node', PRINTER, '--die-of', 'SIGHUP']);
    await run.ready();
    run.signal('SIGHUP');
    expect((await run.finished()).code).toBe(129);
    expect(run.count(/^signal: SIGHUP /)).toBe(1);
    expect(run.count(/^ready/)).toBe(1);
    expect(run.stderr).toEqual([
      '[gsup] command died of SIGHUP, which gsup forwarded: not restarted (--restart on-failure: a signal gsup ' +
        'forwarded is no failure); --reload-signal SIGHUP (with --listen or --wait-ready) would make it a reload',
    ]);
  });

  it('on-failure: after a signal gsup did not send', async () => {
    const run = gsup([
      '--restart',
      'on-failure',
      '--max-restarts',
      '1',
      '--restart-delay',
      '10ms',
      '--',
      'sh',
      '-c',
      'echo run; kill -KILL $$',
    ]);
    expect((await run.finished()).code).toBe(137);
    expect(run.stdout).toEqual(['run', 'run']);
    expect(run.stderr[0]).toBe('[gsup] command died of SIGKILL (restart 1 of 1): restarting in 10ms');
  });

  it('stops what a run left in its group before the next run: two runs never overlap, nothing is left', async () => {
    const run = gsup([
      '--restart',
      'on-failure',
      '--max-restarts',
      '1',
      '--restart-delay',
      '10ms',
      '--',
      'node',
      fixture('spawner.js'),
      '--then',
      'exit:1',
    ]);
    const exit = await run.finished();
    expect(exit.code).toBe(1);
    const events = run.stdout
      .filter((line) => /^(ready|clean exit) .*child0/.test(line))
      .map((line) => line.split(' (')[0]);
    expect(events).toEqual(['ready', 'clean exit', 'ready', 'clean exit']);
    expect(run.count(/^signal: SIGTERM .*child0/)).toBe(2);
    expect(leftovers(run)).toEqual([]);
  });
});
