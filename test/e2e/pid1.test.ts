import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PRINTER,
  Run,
  fixture,
  gsupAsPid1,
  hostPidOfPid1,
  nsenterWorks,
  tempDir,
  unshareWorks,
} from '../helpers/gsup.js';
import { allProcs, readProc, waitFor } from '../helpers/proc.js';

if (!unshareWorks) console.warn('skipping the PID 1 tests: `unshare --pid --fork --mount-proc` is not permitted here');

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
};

async function pid1(run: ReturnType<typeof gsupAsPid1>): Promise<number> {
  let pid: number | undefined;
  await waitFor(() => (pid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
  return pid!;
}

describe.skipIf(!unshareWorks)('gsup as PID 1 (unshare --pid --fork --mount-proc)', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s from outside the namespace starts the stop; the status comes out of unshare',
    async (signal) => {
      const run = gsupAsPid1(['--', 'node', PRINTER, '--cleanup', '200']);
      await run.ready();
      process.kill(await pid1(run), signal);
      const exit = await run.finished();
      expect(exit.code).toBe(0);
      expect(run.count(new RegExp(`^signal: ${signal} `))).toBe(1);
      expect(run.count(/^clean exit/)).toBe(1);
    },
  );

  it('SIGTERM sent to PID 1 from inside the namespace starts the stop', async () => {
    const run = gsupAsPid1([
      '--',
      'node',
      fixture('spawner.js'),
      '--then',
      'kill:SIGTERM:1',
      '--child-args',
      '--cleanup 200',
    ]);
    await run.waitForLine(/^clean exit .*child0/);
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGTERM .*child0/)).toBe(1);
  });

  it.each([
    ['exit 7', 7],
    ['kill -TERM $$', 143],
  ])('`sh -c "%s"` exits unshare with %i', async (script, status) => {
    const run = gsupAsPid1(['--', 'sh', '-c', script]);
    expect((await run.finished()).code).toBe(status);
  });

  it('without koffi it warns once of each loss (reaping, pidfds), still runs, and does not wait on zombies it cannot reap', async () => {
    const run = gsupAsPid1(['-t', '20s', '--', 'sh', '-c', '(true &); (true &); sleep 0.1; exit 3'], {
      env: { GSUP_FFI: '0' },
    });
    const started = Date.now();
    const exit = await run.finished();
    expect(exit.code).toBe(3);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(run.stderr).toEqual([
      '[gsup] as PID 1 gsup cannot reap orphaned zombies: koffi could not be loaded (GSUP_FFI=0)',
      '[gsup] no pidfds (koffi could not be loaded (GSUP_FFI=0)): each signal is a kill(2) right after a look at its target',
    ]);
  });

  it('container stop, well-behaved app: exits with its status before the 10 s SIGKILL', async () => {
    // gsup → sh (no exec) → spawner → app, which takes 300 ms to clean up.
    const run = gsupAsPid1([
      '--',
      'sh',
      '-c',
      `trap '' TERM; node ${fixture('spawner.js')} --child-args "--cleanup 300"; exit $?`,
    ]);
    await run.ready('spawner');
    const gsupPid = await pid1(run);
    process.kill(gsupPid, 'SIGTERM');
    const dockerKill = setTimeout(() => process.kill(gsupPid, 'SIGKILL'), 10_000);
    try {
      const exit = await run.finished(15_000);
      expect(exit).toEqual({ code: 0, signal: null });
    } finally {
      clearTimeout(dockerKill);
    }
    expect(run.count(/^clean exit .*child0/)).toBe(1);
    expect(run.count(/^signal: SIGTERM .*child0/)).toBe(1);
  });

  it('container stop, app ignoring SIGTERM, -t 2s: killed at 2 s, named, exit 137', async () => {
    const run = gsupAsPid1(['-t', '2s', '--', 'node', PRINTER, '--ignore-stop']);
    const appPid = await run.ready();
    const gsupPid = await pid1(run);
    const sent = Date.now();
    process.kill(gsupPid, 'SIGTERM');
    const dockerKill = setTimeout(() => process.kill(gsupPid, 'SIGKILL'), 10_000);
    let exit;
    try {
      exit = await run.finished(15_000);
    } finally {
      clearTimeout(dockerKill);
    }
    const took = Date.now() - sent;
    expect(exit.code).toBe(137);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(4000);
    expect(run.stderr.join('\n')).toMatch(new RegExp(`1 killed: ${appPid} \\(node .*printer\\.js --ignore-stop\\)`));
  });

  // What `docker exec … sh -c "x &"` leaves is gsup's child, never the tree's.
  it.skipIf(!nsenterWorks)(
    '--restart always: a `docker exec` orphan is not stopped, the command’s is',
    async () => {
      const dir = tempDir();
      const go = join(dir.path, 'go');
      // Run 1 leaves a printer behind and exits once told; run 2 is a printer.
      const script =
        `if [ -e ${dir.path}/ran ]; then exec node ${PRINTER} --label second; fi; touch ${dir.path}/ran; ` +
        `node ${PRINTER} --label leftover & while [ ! -e ${go} ]; do sleep 0.05; done; exit 0`;
      const run = gsupAsPid1(['-v', '--restart', 'always', '--restart-delay', '10ms', '--', 'sh', '-c', script]);
      let exec: Run | undefined;
      let foreignHostPid: number | undefined;
      try {
        await run.ready('leftover');
        const gsupPid = await pid1(run);
        // `docker exec`: a shell that enters gsup's namespaces and leaves a process behind, orphaned to gsup.
        const left = `node ${PRINTER} --label foreign & sleep 1.3 & exit 0`;
        exec = new Run('nsenter', ['-t', String(gsupPid), '-p', '-m', 'sh', '-c', left]);
        // Read from its output as it comes: the exec's Run counts as exited once nsenter is gone and its output quiet
        // for a second, which a restart under load can outlast.
        const line = (pattern: RegExp) => exec!.stdout.find((each) => pattern.test(each));
        await waitFor(() => line(/^ready \(pid: \d+, foreign\)/) !== undefined, 'the foreign printer', 10_000);
        const foreign = Number(/pid: (\d+)/.exec(line(/^ready \(pid: \d+, foreign\)/)!)![1]);
        const orphan = (text: string) =>
          allProcs().find((proc) => proc.ppid === gsupPid && cmdline(proc.pid).includes(text))?.pid;
        await waitFor(
          () => (foreignHostPid = orphan('--label\0foreign')) !== undefined,
          'the orphan to be gsup’s child',
        );
        const sleeper = orphan('sleep\x001.3');
        writeFileSync(go, '');
        await run.ready('second'); // run 1 ended, its leftover was stopped, run 2 started
        process.kill(foreignHostPid!, 'SIGUSR2'); // a sign of life: a signal gsup sent would have come first
        await waitFor(() => line(/^signal: SIGUSR2 /) !== undefined, 'its SIGUSR2 line', 10_000);
        expect(exec.count(/^signal: /), exec.transcript()).toBe(1);
        expect(run.count(/^signal: SIGTERM .*leftover/)).toBe(1);
        expect(run.count(/^clean exit .*leftover/)).toBe(1);
        expect(run.stderr.join('\n')).toContain(`pid ${foreign} (node ${PRINTER} --label foreign) is not the tree's`);
        // The final stop: neither signalled nor waited for; the kernel kills it when PID 1 exits.
        process.kill(gsupPid, 'SIGTERM');
        expect((await run.finished()).code).toBe(0);
        expect(run.count(/^signal: SIGTERM .*second/)).toBe(1);
        await waitFor(() => readProc(foreignHostPid!) === undefined, 'the orphan to be gone with the namespace');
        // The other orphan ended by itself before: reaped (no zombie of it was left).
        expect(sleeper).toBeDefined();
        expect(readProc(sleeper!)).toBeUndefined();
        expect(exec.count(/^signal: /)).toBe(1);
      } finally {
        const alive = foreignHostPid !== undefined && cmdline(foreignHostPid).includes('foreign');
        if (alive) process.kill(foreignHostPid!, 'SIGKILL');
        await exec?.finished().catch(() => undefined);
        dir.remove();
      }
    },
    30_000,
  );
});
