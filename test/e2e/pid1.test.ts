import { afterEach, describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsupAsPid1, hostPidOfPid1, killEverything, unshareWorks } from '../helpers/gsup.js';
import { allProcs, waitFor } from '../helpers/proc.js';

afterEach(() => {
  expect(killEverything(), 'processes left behind').toEqual([]);
});

if (!unshareWorks) console.warn('skipping the PID 1 tests: `unshare --pid --fork --mount-proc` is not permitted here');

async function pid1(run: ReturnType<typeof gsupAsPid1>): Promise<number> {
  let pid: number | undefined;
  await waitFor(() => (pid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
  return pid!;
}

describe.skipIf(!unshareWorks)('gsup as PID 1 (unshare --pid --fork --mount-proc)', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s from outside the namespace starts the stop; the status comes out of unshare', async (signal) => {
    const run = gsupAsPid1(['--', 'node', PRINTER, '--cleanup', '200']);
    await run.ready();
    process.kill(await pid1(run), signal);
    const exit = await run.finished();
    expect(exit.code).toBe(0);
    expect(run.count(new RegExp(`^signal: ${signal} `))).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
  });

  it('SIGTERM sent to PID 1 from inside the namespace starts the stop', async () => {
    const run = gsupAsPid1(['--', 'node', fixture('spawner.js'), '--then', 'kill:SIGTERM:1', '--child-args', '--cleanup 200']);
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

  it('reaps 10,000 short-lived orphans: never over 100 zombies at once, 0 at the end', async () => {
    const script = 'i=0; while [ $i -lt 10000 ]; do (true &); i=$((i+1)); done; echo "made $i orphans"; sleep 0.2; ' +
      "echo \"zombies: $(grep -l '^[0-9]* ([^)]*) Z' /proc/[0-9]*/stat 2>/dev/null | wc -l)\"";
    const run = gsupAsPid1(['--', 'sh', '-c', script]);
    const gsupPid = await pid1(run);
    let most = 0;
    const sampler = setInterval(() => {
      const zombies = allProcs().filter((proc) => proc.ppid === gsupPid && proc.state === 'Z').length;
      most = Math.max(most, zombies);
    }, 5);
    try {
      // What is measured is zombies, not speed: this VM forks at ~9 ms a pair (77–91 s for the 10,000 idle, over 120 s with every core busy).
      const exit = await run.finished(300_000);
      expect(exit.code).toBe(0);
    } finally {
      clearInterval(sampler);
    }
    expect(run.stdout).toContain('made 10000 orphans');
    expect(run.stdout).toContain('zombies: 0');
    expect(most).toBeLessThanOrEqual(100);
  }, 360_000);

  it('without koffi it warns once of each loss (reaping, pidfds), still runs, and does not wait on zombies it cannot reap', async () => {
    const run = gsupAsPid1(['-t', '20s', '--', 'sh', '-c', '(true &); (true &); sleep 0.1; exit 3'], { env: { GSUP_FFI: '0' } });
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
    const run = gsupAsPid1(['--', 'sh', '-c', `trap '' TERM; node ${fixture('spawner.js')} --child-args "--cleanup 300"; exit $?`]);
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
});
