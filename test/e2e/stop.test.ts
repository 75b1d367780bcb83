import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup, leftovers, markerPath } from '../helpers/gsup.js';
import { related } from '../helpers/proc.js';

describe('the stop sequence', () => {
  it('waits for the whole tree: the app finishes its 1 s cleanup after its parent exited', async () => {
    const done = markerPath();
    const run = gsup(['--', 'node', fixture('spawner.js'), '--child-args', `--cleanup 1000 --marker ${done}`]);
    const appPid = await run.ready('child0');
    await run.ready('spawner');
    const sent = Date.now();
    run.signal('SIGTERM');
    const exit = await run.finished();
    // gsup exited after the app's cleanup, not when the spawner (its child) did.
    expect(existsSync(done)).toBe(true);
    expect(readFileSync(done, 'utf8')).toBe(`clean exit ${appPid}\n`);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(1000);
    expect(run.count(/^signal: SIGTERM .*child0/)).toBe(1);
    expect(exit.code).toBe(0);
    expect(run.stderr.join('\n')).toMatch(/stopped in .*: 2 exited by themselves, 0 killed/);
  });

  it('SIGKILLs at the kill timeout, again and again, until a forking tree is gone', async () => {
    const run = gsup(['-t', '500ms', '--', 'node', fixture('forker.js')]);
    const forkerPid = await run.ready('forker');
    // Let it fork a few generations first.
    await new Promise<void>((resolve) => {
      const check = () => (related([forkerPid]).length > 10 ? resolve() : setTimeout(check, 10));
      check();
    });
    const sent = Date.now();
    run.signal('SIGTERM');
    const exit = await run.finished();
    const took = Date.now() - sent;
    expect(run.count(/^signal: SIGTERM .*forker/)).toBe(1);
    expect(exit.code).toBe(137); // the command died of SIGKILL
    expect(took).toBeGreaterThanOrEqual(500);
    expect(took).toBeLessThan(3000);
    const summary = run.stderr.find((line) => line.includes('stopped in'));
    expect(summary).toMatch(/\d+ killed: \d+ \(node .*forker\.js\)/);
    expect(Number(/(\d+) killed/.exec(summary!)![1])).toBeGreaterThan(10);
    // Nothing of its session survived.
    expect(related([forkerPid], [forkerPid])).toEqual([]);
  });

  it('a process forked after the stop signal (a cleanup helper of a trap) is its parent’s: not sent the stop signal', async () => {
    const script = "trap '(sleep 0.5; echo helper done); exit 0' TERM; echo started; while sleep 1; do :; done";
    const run = gsup(['--', 'sh', '-c', script]);
    await run.waitForLine(/^started$/);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toContain('helper done');
  });

  it('--stop-delay holds SIGTERM back, and a second stop signal ends the wait', async () => {
    const run = gsup(['--stop-delay', '600ms', '--', 'node', PRINTER]);
    await run.ready();
    let sent = Date.now();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(550);
    expect((await run.finished()).code).toBe(0);

    const again = gsup(['--stop-delay', '20s', '--', 'node', PRINTER]);
    await again.ready();
    again.signal('SIGTERM');
    await again.waitForLine(/waiting 20\.00s before forwarding SIGTERM/, { stream: 'stderr' });
    sent = Date.now();
    again.signal('SIGTERM');
    await again.waitForLine(/^signal: SIGTERM /);
    expect(Date.now() - sent).toBeLessThan(2000);
    expect((await again.finished()).code).toBe(0);
    expect(again.count(/^signal: SIGTERM /)).toBe(1);
  });

  it('--stop-delay is not cut short by children exiting (SIGCHLD) meanwhile', async () => {
    // Orphans that exit every 50 ms: each one is a SIGCHLD to gsup, their subreaper.
    const script = `trap '' TERM; node ${PRINTER} & while :; do (sleep 0.05 &); sleep 0.05; done`;
    const run = gsup(['-t', '2s', '--stop-delay', '800ms', '--', 'sh', '-c', script]);
    await run.ready();
    const sent = Date.now();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(750);
    await run.finished();
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
  });

  it('--stop-delay ends when the tree goes away by itself, and the summary counts the wait', async () => {
    const run = gsup(['--stop-delay', '20s', '--', 'sh', '-c', 'echo started; sleep 1']);
    await run.waitForLine(/^started$/);
    const sent = Date.now();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    const took = Date.now() - sent;
    expect(took).toBeLessThan(5000);
    const summary = run.stderr.find((line) => line.includes('stopped in'));
    expect(summary).toMatch(/stopped in (\d+)ms|stopped in ([\d.]+)s/);
    const [, ms, s] = /stopped in (?:(\d+)ms|([\d.]+)s)/.exec(summary!)!;
    // The wait is part of the stop: from the SIGTERM to the end, not from a forward that never came.
    expect(ms !== undefined ? Number(ms) : Number(s) * 1000).toBeGreaterThanOrEqual(took - 600);
    // sh and its sleep were there when the stop began, and exited by themselves: counted.
    expect(summary).toMatch(/: 2 exited by themselves, 0 killed$/);
  });

  it("no option set: an app that ignores SIGTERM is SIGKILLed at 8 s (under docker stop's 10 s), named", async () => {
    const run = gsup(['--', 'node', PRINTER, '--ignore-stop']);
    const appPid = await run.ready();
    const sent = Date.now();
    run.signal('SIGTERM');
    const exit = await run.finished(20_000);
    const took = Date.now() - sent;
    expect(exit.code).toBe(137);
    expect(took).toBeGreaterThanOrEqual(7900);
    expect(took).toBeLessThan(9500); // the runtime's own SIGKILL comes at 10 s
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.stderr.join('\n')).toContain('kill timeout (8.00s) expired: sending SIGKILL');
    const summary = run.stderr.find((line) => line.includes('stopped in'));
    expect(summary).toMatch(new RegExp(`1 killed: ${appPid} \\(node .*printer\\.js`));
  });

  it('-r TERM:KILL: SIGTERM kills the tree at once, and the summary says what was killed', async () => {
    const run = gsup(['-r', 'TERM:KILL', '--', 'node', PRINTER]);
    const appPid = await run.ready();
    const sent = Date.now();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(137);
    expect(Date.now() - sent).toBeLessThan(3000);
    expect(run.count(/^signal: /)).toBe(0); // SIGKILL: the app saw nothing
    expect(run.stderr[0]).toBe('[gsup] SIGTERM received: killing the tree (rewritten to SIGKILL)');
    const summary = run.stderr.find((line) => line.includes('stopped in'));
    expect(summary).toMatch(new RegExp(`: 0 exited by themselves, 1 killed: ${appPid} \\(node `));
  });

  it('-r TERM:0 and -r TERM:HUP (SIGTERM stops nothing): one warning at start', async () => {
    for (const [rule, said] of [
      ['TERM:0', 'drops SIGTERM'],
      ['TERM:HUP', 'turns SIGTERM into SIGHUP, which does not stop the tree'],
    ]) {
      const run = gsup(['-r', rule, '--', 'node', PRINTER]);
      await run.ready();
      const then = 'docker stop and Kubernetes will SIGKILL everything when their grace ends';
      const warning = `[gsup] the rewrite ${said}: ${then}`;
      await run.waitForLine(/the rewrite/, { stream: 'stderr' });
      run.signal('SIGINT');
      expect((await run.finished()).code).toBe(0);
      expect(run.stderr.filter((line) => line.includes('the rewrite'))).toEqual([warning]);
      expect(run.stderr[0]).toBe(warning); // at start, before the stop
    }
    // A rule that keeps SIGTERM a stop says nothing.
    const quiet = gsup(['-r', 'TERM:INT', '--', 'node', PRINTER]);
    await quiet.ready();
    quiet.signal('SIGTERM');
    expect((await quiet.finished()).code).toBe(0);
    expect(quiet.stderr.filter((line) => line.includes('the rewrite'))).toEqual([]);
  });

  it('SIGINT does not wait for the stop delay', async () => {
    const run = gsup(['--stop-delay', '20s', '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGINT');
    await run.waitForLine(/^signal: SIGINT /, { timeoutMs: 3000 });
    expect((await run.finished()).code).toBe(0);
    expect(leftovers(run)).toEqual([]);
  });
});

describe('signals at start-up', () => {
  it('a SIGTERM that arrives while the command starts is held and handled, not fatal', async () => {
    const run = gsup(['--', 'sh', '-c', 'kill -TERM $PPID; sleep 20']);
    const exit = await run.finished(10_000);
    expect(exit.signal).toBeNull(); // gsup did not die of it
    expect(exit.code).toBe(143); // sh died of the forwarded SIGTERM
    expect(run.stderr[0]).toMatch(/SIGTERM received: stopping the tree/);
  });
});
