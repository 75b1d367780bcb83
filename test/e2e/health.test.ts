import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../helpers/net.js';
import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup, leftovers, tempDir } from '../helpers/gsup.js';
import { allProcs, commandLine, isAlive, waitFor } from '../helpers/proc.js';

/** Fire and forget: the request that hangs the app gets no answer. */
function hang(port: number): void {
  request({ host: '127.0.0.1', port, path: '/hang' })
    .on('error', () => {})
    .end();
}

// Short enough for a test, the same rules as the defaults; the start period covers node's start-up
// on a loaded machine (a success ends it).
const QUICK = [
  '--health-interval',
  '200ms',
  '--health-timeout',
  '300ms',
  '--health-retries',
  '2',
  '--health-start-period',
  '20s',
];

describe('health checks that act', () => {
  it('--health-url: an app whose event loop hangs is stopped (SIGKILL at the kill timeout), restarted, and healthy again', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/health`;
    const run = gsup(
      [
        '--restart',
        'on-failure',
        '--restart-delay',
        '100ms',
        '-t',
        '1s',
        '--health-url',
        url,
        ...QUICK,
        '--',
        'node',
        fixture('health-app.js'),
      ],
      {
        env: { PORT: String(port) },
      },
    );
    const first = await run.ready('health-app');
    await run.waitForLine(/command is healthy \(HTTP 200\)/, { stream: 'stderr' });
    const hung = Date.now();
    hang(port);
    await run.waitForLine(/^hanging /);
    await run.waitForLine(
      /command is unhealthy: 2 health check\(s\) failed in a row, the last: timed out after 300 ms/,
      { stream: 'stderr' },
    );
    await waitFor(
      () => run.stdout.filter((line) => line.startsWith('ready (pid:')).length === 2,
      'the restart',
      10_000,
    );
    // interval × retries + timeout + kill timeout, and a margin for a loaded machine.
    const stoppedWithin = 200 * 2 + 300 + 1000;
    expect(Date.now() - hung).toBeLessThan(stoppedWithin + 3000);
    expect(isAlive(first)).toBe(false);
    const stderr = run.stderr.join('\n');
    expect(stderr).toMatch(/unhealthy: stopping the tree with SIGTERM/);
    expect(stderr).toMatch(new RegExp(`1 killed: ${first} \\(node .*health-app\\.js\\)`));
    expect(stderr).toMatch(/command was unhealthy \(restart 1 of 10\)/);
    await waitFor(
      () => run.stderr.filter((line) => /command is healthy/.test(line)).length === 2,
      'healthy again',
      10_000,
    );
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });

  it('--health-file: a worker that stops touching its heartbeat file is restarted (a relative path is the start directory’s)', async () => {
    const dir = tempDir();
    try {
      const run = gsup(
        [
          '--restart',
          'on-failure',
          '--restart-delay',
          '100ms',
          '--health-file',
          'beat',
          '--health-max-age',
          '300ms',
          ...QUICK,
          '--',
          'node',
          fixture('heartbeat.js'),
          'beat',
        ],
        { cwd: dir.path },
      );
      const first = await run.ready('heartbeat');
      await run.waitForLine(/command is healthy/, { stream: 'stderr' });
      run.signal('SIGUSR1'); // forwarded: the worker is stuck from now on
      await run.waitForLine(/^stuck /);
      await run.waitForLine(/command is unhealthy: .*beat last touched \d+ ms ago/, { stream: 'stderr' });
      await waitFor(
        () => run.stdout.filter((line) => line.startsWith('ready (pid:')).length === 2,
        'the restart',
        10_000,
      );
      expect(isAlive(first)).toBe(false);
      // It handled SIGTERM: stopped without a kill.
      expect(run.stderr.join('\n')).toMatch(/stopped in .*: 1 exited by themselves, 0 killed/);
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
    } finally {
      dir.remove();
    }
  });

  it('--health-cmd that hangs is killed with its whole group at the timeout, and leaves nothing behind', async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir.path, 'probe.pid');
      // The probe starts a child of its own, then hangs.
      const probe = `echo $$ > ${pidFile}; sleep 100 & sleep 100`;
      const run = gsup([
        '-v',
        '--health-cmd',
        probe,
        '--health-interval',
        '100ms',
        '--health-timeout',
        '300ms',
        '--health-retries',
        '100',
        '--',
        'node',
        PRINTER,
      ]);
      await run.ready();
      await run.waitForLine(/health check failed \(1 of 100\): timed out after 300 ms/, { stream: 'stderr' });
      const group = Number(readFileSync(pidFile, 'utf8'));
      await waitFor(
        () => !allProcs().some((proc) => proc.pgid === group && proc.state !== 'Z'),
        'the probe’s group to be gone',
        3000,
      );
      // Probes are no part of the tree: none of them was ever sent a forwarded signal or named as joining.
      expect(run.stderr.join('\n')).not.toMatch(new RegExp(`pid ${group} joined`));
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
      expect(allProcs().filter((proc) => proc.pgid === group && proc.state !== 'Z')).toEqual([]);
    } finally {
      dir.remove();
    }
  });

  it('failures in the start period do not count; a success ends it, and then they do', async () => {
    const dir = tempDir();
    try {
      const ok = join(dir.path, 'ok');
      const run = gsup([
        '--health-cmd',
        `test -f ${ok}`,
        '--health-start-period',
        '30s',
        '--health-interval',
        '100ms',
        '--health-retries',
        '1',
        '-v',
        '--',
        'node',
        PRINTER,
      ]);
      await run.ready();
      await waitFor(
        () => run.stderr.filter((line) => /in the start period, not counted/.test(line)).length >= 3,
        'three failures in the start period',
      );
      expect(run.stderr.join('\n')).not.toMatch(/unhealthy/);
      writeFileSync(ok, '');
      await run.waitForLine(/command is healthy/, { stream: 'stderr' });
      rmSync(ok);
      await run.waitForLine(/command is unhealthy: 1 health check\(s\) failed in a row/, { stream: 'stderr' });
      expect((await run.finished()).code).toBe(1);
      expect(existsSync(ok)).toBe(false);
    } finally {
      dir.remove();
    }
  });

  it('--restart never: after an unhealthy stop gsup exits non-zero, even when the app exited 0 on SIGTERM', async () => {
    const dir = tempDir();
    try {
      // Healthy until the test says otherwise (the app must be up first: node takes a while to start).
      const broken = join(dir.path, 'broken');
      const run = gsup([
        '--health-cmd',
        `if [ -e ${broken} ]; then exit 3; fi`,
        '--health-interval',
        '100ms',
        '--health-retries',
        '2',
        '--',
        'node',
        PRINTER,
      ]);
      await run.ready();
      await run.waitForLine(/command is healthy/, { stream: 'stderr' });
      writeFileSync(broken, '');
      const exit = await run.finished();
      expect(exit.code).toBe(1);
      expect(run.count(/^signal: SIGTERM /)).toBe(1);
      expect(run.count(/^clean exit /)).toBe(1);
      expect(run.stderr.join('\n')).toMatch(
        /command is unhealthy: 2 health check\(s\) failed in a row, the last: exit 3/,
      );
    } finally {
      dir.remove();
    }
  });

  it('--log-format json: the unhealthy line carries the last probe’s error', async () => {
    const dir = tempDir();
    try {
      const broken = join(dir.path, 'broken');
      const probe = `if [ -e ${broken} ]; then echo broken; exit 1; fi`;
      const run = gsup([
        '--log-format',
        'json',
        '--health-cmd',
        probe,
        '--health-interval',
        '100ms',
        '--health-retries',
        '1',
        '--',
        'node',
        PRINTER,
      ]);
      await run.ready();
      await run.waitForLine(/"event":"healthy"/, { stream: 'stderr' });
      writeFileSync(broken, '');
      await run.finished();
      const unhealthy = run.stderr.map((line) => JSON.parse(line)).find((entry) => entry.event === 'unhealthy');
      expect(unhealthy).toMatchObject({ level: 'warn', failures: 1, error: 'exit 1: broken' });
    } finally {
      dir.remove();
    }
  });
});

describe('health probes bounded by their timeout', () => {
  it('a probe that leaves a child holding its output keeps its schedule; what it left is the tree’s and stopped with it', async () => {
    // A duration no other test uses: its processes can be told apart on the machine.
    const probe = 'setsid sleep 31.7 & exit 0';
    const run = gsup([
      '-v',
      '--health-cmd',
      probe,
      '--health-interval',
      '200ms',
      '--health-timeout',
      '500ms',
      '--',
      'node',
      PRINTER,
    ]);
    await run.ready();
    // On a probe that waited for its output to close, the first round would last 31.7 s.
    await waitFor(
      () => run.stderr.filter((line) => line.includes('health check passed')).length >= 4,
      'four rounds',
      5000,
    );
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(leftovers(run)).toEqual([]);
    // Each sleep died with its probe's group (SIGKILL at the probe's exit) or, once it had left it, with the tree.
    await waitFor(
      () => !allProcs().some((proc) => proc.state !== 'Z' && commandLine(proc.pid) === 'sleep 31.7'),
      'no sleep of the probes to be left',
      2000,
    );
  });
});
