import { describe, expect, it } from 'vitest';
import { fixture, gsup, leftovers } from '../helpers/gsup.js';
import { isAlive } from '../helpers/proc.js';

// A member of the command's group that leaves it (setsid) between a stop round's look and its group send: the
// kernel's group send does not reach it. gsup reads each member planned for the group again right after the send:
// one outside the group then, with the signal not pending and no handler, left before the send (the signal's
// default action would have ended it) and is not reached; one with a handler cannot be told, and counts as reached.

// The command forks a job into its group, says `forked`, and waits; the job leaves the group (setsid) 1.5 s
// later, then runs `$0`.
const LEAVES = 'sh -c "sleep 1.5; exec setsid sh -c \\"\\$0\\"" "$0" & echo forked; wait';
const PLAIN = 'echo "ready (pid: $$, job)"; exec sleep 30';
const HANDLER =
  'exec perl -e \'$| = 1; $SIG{TERM} = sub { print "signal: SIGTERM (pid: $$, job)\\n"; exit 0 }; ' +
  'print "ready (pid: $$, job)\\n"; sleep 1 for 1..30\'';

/** gsup on the leaving job, its first group send held 3 s (the job leaves meanwhile), SIGTERM once it forked. */
async function stopWhileLeaving(job: string, killTimeout: string) {
  const node = ['--require', fixture('hold-send.cjs')];
  const run = gsup(['-v', '-t', killTimeout, '--', 'sh', '-c', LEAVES, job], { node, env: { HOLD_SEND_MS: '3000' } });
  await run.waitForLine(/^forked$/);
  const sent = Date.now();
  run.signal('SIGTERM');
  const exit = await run.finished(20_000);
  const pid = Number((await run.waitForLine(/^ready \(pid: (\d+), job\)$/))[1]);
  return { run, exit, pid, took: Date.now() - sent, log: run.stderr.join('\n') };
}

describe('a member that leaves its group between the look and the group send', () => {
  it('with no handler: not reached by the send, so a later round sends it the signal (before: SIGKILL)', async () => {
    const { run, exit, pid, took, log } = await stopWhileLeaving(PLAIN, '10s');
    expect(log).toMatch(new RegExp(`pid ${pid} left group \\d+ for group ${pid} before SIGTERM went to`));
    expect(log).toContain(`reaped pid ${pid} (signal SIGTERM)`);
    expect(log).toMatch(/stopped in .*: \d+ exited by themselves, 0 killed/);
    expect(took).toBeLessThan(8000); // the 3 s hold and the rounds after it; the kill timeout is 10 s
    expect(exit.code).toBe(143); // sh died of SIGTERM, and so did the job it left
    expect(isAlive(pid)).toBe(false);
    expect(leftovers(run)).toEqual([]);
  }, 30_000);

  it('with a handler and nothing pending: cannot be told, counted as reached and said (never sent it twice)', async () => {
    const { run, pid, log } = await stopWhileLeaving(HANDLER, '5s');
    expect(log).toMatch(
      new RegExp(`pid ${pid} left group \\d+ for group ${pid} around SIGTERM's send .*counted as reached`),
    );
    // It had nothing: the kill timeout ends it (the price of at most once, docs/limits.md).
    expect(run.count(/^signal: SIGTERM \(pid: \d+, job\)$/)).toBe(0);
    expect(log).toMatch(new RegExp(`1 killed: ${pid} `));
    expect(leftovers(run)).toEqual([]);
  }, 30_000);
});

describe('a bootstrap loop that starts daemonized jobs (setsid) with no handler, stopped while it forks', () => {
  // A job leaves the command's group 30 ms after its fork; a new one every 10 ms: some leave in the window.
  const LOOP = 'while :; do sh -c "sleep 0.03; exec setsid sh -c \\"\\$0\\"" "$0" & sleep 0.01; done';

  it('5 stops: each job ends of the stop signal, none is SIGKILLed at the kill timeout', async () => {
    const killed: string[] = [];
    for (let stop = 0; stop < 5; stop++) {
      const run = gsup(['-v', '-t', '5s', '--', 'sh', '-c', LOOP, PLAIN]);
      await run.waitForLine(/^ready \(pid: \d+, job\)$/);
      await new Promise((resolve) => setTimeout(resolve, 100)); // jobs leaving all the time
      run.signal('SIGTERM');
      await run.finished(20_000);
      const summary = run.stderr.find((line) => line.includes('stopped in')) ?? '';
      if (!/ 0 killed/.test(summary)) killed.push(summary, ...run.stderr.filter((line) => line.includes('→')));
      expect(leftovers(run)).toEqual([]);
    }
    expect(killed).toEqual([]);
  }, 120_000);
});
