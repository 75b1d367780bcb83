import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup, leftovers } from '../helpers/gsup.js';
import { isAlive, readProc, waitFor } from '../helpers/proc.js';

// The stop signal exactly once while the tree forks, exits and reparents between a look and the send, and a
// stopped process that can act on it.

// A job: says it started, prints each SIGTERM it gets with its pid; it lives 3 s, or 0.5 s more after a SIGTERM
// (its trap), long enough for the stop's next rounds to find it, reparented, in its old group.
const JOB = [
  `trap 'echo "signal: SIGTERM (pid: $$, job)"; t=1' TERM`,
  'echo "ready (pid: $$, job)"',
  'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.3; [ -n "$t" ] && break; done',
  'sleep 0.5',
].join('; ');
// A bootstrap loop: a new job into its group every 20 ms, none waited for (they overlap); the loop itself dies of
// SIGTERM, and the jobs it leaves are reparented to gsup.
const LOOP = 'while :; do sh -c "$0" & sleep 0.02; done';

/**
 * One gsup run of the loop, stopped once jobs overlap: how many SIGTERMs each job printed, by pid, and the jobs
 * alive when the test sent gsup its SIGTERM (each of them must get one: none is missed either).
 */
async function stopLoop(options: { hold?: boolean } = {}) {
  const node = options.hold ? ['--require', fixture('hold-look.cjs')] : [];
  const run = gsup(['-v', '--', 'sh', '-c', LOOP, JOB], { node, env: { HOLD_LOOK_MS: '100' } });
  const jobs = () => run.stdout.flatMap((line) => /^ready \(pid: (\d+), job\)$/.exec(line)?.[1] ?? []).map(Number);
  await waitFor(() => jobs().length >= 5, 'five jobs started', 10_000);
  const alive = jobs().filter(isAlive);
  run.signal('SIGTERM');
  await run.finished();
  const perJob = new Map<number, number>(jobs().map((pid) => [pid, 0]));
  for (const line of run.stdout) {
    const match = /^signal: SIGTERM \(pid: (\d+), job\)$/.exec(line);
    if (match) perJob.set(Number(match[1]), (perJob.get(Number(match[1])) ?? 0) + 1);
  }
  expect(leftovers(run)).toEqual([]);
  return { run, perJob, alive };
}

/** The jobs that did not print SIGTERM exactly once (twice, or alive at the stop and never), with what gsup sent. */
function notOnce({ run, perJob, alive }: Awaited<ReturnType<typeof stopLoop>>): string[] {
  const wrong = [...perJob]
    .filter(([pid, count]) => count > 1 || (count === 0 && alive.includes(pid)))
    .map(([pid, count]) => `pid ${pid}: ${count}×`);
  return wrong.length === 0 ? [] : [...wrong, ...run.stderr.filter((line) => line.includes('→'))];
}

describe('a shell loop that starts short jobs, stopped while it forks', () => {
  it('20 stops: no job gets SIGTERM twice (one forked between the look and the group send has had it)', async () => {
    const wrong: string[] = [];
    let signalled = 0;
    // Four at a time: the load widens the window between a look and its send, as on a busy host.
    for (let batch = 0; batch < 5; batch++) {
      const runs = await Promise.all([0, 1, 2, 3].map(() => stopLoop()));
      for (const result of runs) {
        wrong.push(...notOnce(result));
        signalled += result.alive.length;
      }
    }
    expect(wrong).toEqual([]);
    expect(signalled).toBeGreaterThanOrEqual(20 * 5); // each stop found jobs to signal
  }, 120_000);

  it('a look held open (a job is certainly forked after it, before the send): each job gets SIGTERM once', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await stopLoop({ hold: true });
      expect(notOnce(result)).toEqual([]);
      expect(result.alive.length).toBeGreaterThanOrEqual(5);
      // The jobs forked while the look was held were never seen before the send, and had it all the same.
      expect(result.perJob.size).toBeGreaterThan(result.alive.length);
      expect(result.run.stderr.join('\n')).toMatch(/stopped in .*: \d+ exited by themselves, 0 killed/);
    }
  }, 60_000);
});

describe('a stopped process of the tree', () => {
  it('SIGSTOPped: SIGCONT follows the stop signal, so the stop takes its shutdown time, not the kill timeout', async () => {
    const run = gsup(['-t', '10s', '--', 'sh', '-c', `node ${PRINTER} --cleanup 300; true`]);
    const app = await run.ready();
    process.kill(app, 'SIGSTOP');
    await waitFor(() => readProc(app)?.state === 'T', 'the app stopped');
    const sent = Date.now();
    run.signal('SIGTERM');
    const exit = await run.finished();
    expect(Date.now() - sent).toBeLessThan(3000); // 300 ms of cleanup; the kill timeout is 10 s
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.count(/^signal: SIGCONT /)).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
    expect(exit.code).toBe(0); // sh died of SIGTERM; the app behind it, reaped by gsup, exited 0
    expect(run.stderr.join('\n')).toMatch(/0 killed/);
    expect(leftovers(run)).toEqual([]);
  });
});
