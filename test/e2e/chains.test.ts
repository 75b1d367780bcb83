import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, Run, fixture, gsup, leftovers, markerPath } from '../helpers/gsup.js';
import { isAlive, readProc, related, waitFor } from '../helpers/proc.js';

const APP_TS = 'fixtures/app.ts';

beforeAll(() => {
  // The first tsx run compiles: do it here, not in a timed test.
  execFileSync('npx', ['tsx', APP_TS, '--exit-now'], { cwd: ROOT, stdio: 'ignore', timeout: 60_000 });
}, 90_000);

describe.each([
  { name: 'npx tsx', command: ['npx', 'tsx', APP_TS] },
  { name: 'npm exec tsx', command: ['npm', 'exec', 'tsx', '--', APP_TS] },
])('gsup -- $name fixtures/app.ts', ({ command }) => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the app gets it once, cleans up, and gsup exits after it',
    async (signal) => {
      const done = markerPath();
      const run = gsup(['--', ...command, '--cleanup', '500', '--marker', done]);
      const app = await run.ready('app');
      run.signal(signal);
      const exit = await run.finished();
      expect(existsSync(done)).toBe(true);
      expect(run.count(new RegExp(`^signal: ${signal} `))).toBe(1);
      expect(run.count(/^signal: /)).toBe(1);
      expect(run.count(/^clean exit/)).toBe(1);
      expect(isAlive(app)).toBe(false);
      // SIGTERM: npm dies of it at once, and gsup reaps the app's 0; SIGINT: npm waits, then dies of it (130).
      expect(exit.code).toBe(signal === 'SIGTERM' ? 0 : 130);
      expect(leftovers(run)).toEqual([]);
    },
  );

  it('SIGTERM, then SIGINT during the cleanup: the app gets each once (tsx relays neither a second time)', async () => {
    const run = gsup(['--', ...command, '--cleanup', '2000']);
    await run.ready('app');
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    run.signal('SIGINT');
    await run.waitForLine(/^signal: SIGINT /);
    await run.finished();
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
    expect(leftovers(run)).toEqual([]);
  });
});

describe('gsup -- npx tsx watch fixtures/app.ts', () => {
  // tsx watch relays a stop signal to its app, and stays when its app exits (it waits for changes): gsup sends the
  // app the signal itself, and tsx watch its own once the app is gone.
  it('SIGINT: the app gets it once, then tsx watch; gsup ends in the app’s shutdown time, not at the kill timeout', async () => {
    const done = markerPath();
    const run = gsup(['-v', '-t', '10s', '--', 'npx', 'tsx', 'watch', APP_TS, '--cleanup', '500', '--marker', done]);
    const app = await run.ready('app');
    const tsx = readProc(app)!.ppid;
    const sent = Date.now();
    run.signal('SIGINT');
    const exit = await run.finished();
    expect(Date.now() - sent).toBeLessThan(4000);
    expect(existsSync(done)).toBe(true);
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    expect(run.count(/^signal: /)).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
    // As `npx tsx app.ts` ends on SIGINT: npm waits for its child, then dies of it.
    expect(exit.code).toBe(130);
    const log = run.stderr.join('\n');
    expect(log).toMatch(/stopped in .*: \d+ exited by themselves, 0 killed/);
    // Said as sent: tsx left out beside its app, then sent the signal once the app was gone.
    expect(log).toMatch(new RegExp(`SIGINT → .*relayer pid ${tsx} left out`));
    expect(log).toMatch(new RegExp(`SIGINT → pid ${tsx} \\(relayer, its child gone\\)`));
    expect(leftovers(run)).toEqual([]);
  });
});

// World premise, not gsup: what happens without it. gsup relies on this to exist at all (the README's first
// paragraph, and its advice never to start gsup through npx). Should npx ever pass SIGTERM on and wait, this fails,
// and the README's problem statement must change, not gsup.
describe('world premise: without gsup', () => {
  it('kill -TERM to npx leaves the app running (the problem gsup solves)', async () => {
    const done = markerPath();
    const run = new Run('npx', ['tsx', APP_TS, '--marker', done]);
    const app = await run.ready('app');
    process.kill(run.pid, 'SIGTERM');
    await run.finished();
    // npx is gone; the app never heard of it and runs on.
    expect(run.count(/^signal: /)).toBe(0);
    expect(isAlive(app)).toBe(true);
    expect(existsSync(done)).toBe(false);
    expect(related([app]).map((proc) => proc.pid)).toContain(app);
    // What npx left (tsx and the app under it) is this test's to end.
    const tsx = readProc(app)!.ppid;
    const left = [app, ...(readFileSync(`/proc/${tsx}/cmdline`, 'latin1').includes('tsx') ? [tsx] : [])].filter(
      isAlive,
    );
    for (const pid of left) process.kill(pid, 'SIGKILL');
    await waitFor(() => left.every((pid) => !isAlive(pid)), 'what npx left to be gone');
  });
});

describe('a bootstrap shell script without exec', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s: the app gets one signal and cleans up', async (signal) => {
    const done = markerPath();
    const run = gsup(['--', 'bash', fixture('bootstrap.sh'), '--cleanup', '300', '--marker', done]);
    await run.ready('app');
    run.signal(signal);
    await run.finished();
    expect(existsSync(done)).toBe(true);
    expect(run.count(new RegExp(`^signal: ${signal} .*app\\)`))).toBe(1);
    expect(run.count(/^signal: /)).toBe(1);
    expect(leftovers(run)).toEqual([]);
  });
});
