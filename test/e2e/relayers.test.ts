import { execFileSync } from 'node:child_process';
import { copyFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PRINTER, ROOT, fixture, gsup, leftovers, tempDir } from '../helpers/gsup.js';
import { readProc } from '../helpers/proc.js';

// Wrappers that relay a stop signal to their child themselves, beside gsup's send to the child's group: Node's own
// watch mode, nodemon, tsx behind node's options. Each is left out while its child has the signal, and gets it
// alone once the child is gone (the watchers stay after their child). The app prints each signal it gets, and
// with --force-on-second a second one ends it at once with status 1.

const NODEMON = join(ROOT, 'node_modules/.bin/nodemon');
const TSX = join(ROOT, 'node_modules/.bin/tsx');

beforeAll(() => {
  // The first tsx run compiles: do it here, not in a timed test.
  execFileSync(TSX, [fixture('app.ts'), '--exit-now'], { cwd: ROOT, stdio: 'ignore', timeout: 60_000 });
}, 90_000);

/** A stop of `command` once its app is ready: the app's signals, and what gsup said it sent. */
async function stop(command: string[], signal: 'SIGTERM' | 'SIGINT', label = 'printer') {
  const run = gsup(['-v', '-t', '10s', '--', ...command]);
  const app = await run.ready(label);
  const relayer = readProc(app)!.ppid;
  const sent = Date.now();
  run.signal(signal);
  const exit = await run.finished();
  return { run, exit, relayer, took: Date.now() - sent, log: run.stderr.join('\n') };
}

describe.each([
  { name: 'node --watch', command: () => ['node', '--watch', PRINTER, '--cleanup', '300', '--force-on-second'] },
  {
    name: 'nodemon',
    command: () => {
      const watched = tempDir().path; // nodemon watches this alone (not the whole checkout)
      return [NODEMON, '--no-update-notifier', '--watch', watched, PRINTER, '--cleanup', '300', '--force-on-second'];
    },
  },
])('gsup -- $name app.js', ({ command }) => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the app gets it once; the watcher gets it alone once the app is gone, and ends',
    async (signal) => {
      const { run, relayer, took, log } = await stop(command(), signal);
      expect(run.count(new RegExp(`^signal: ${signal} `))).toBe(1);
      expect(run.count(/^signal: /)).toBe(1);
      expect(run.count(/^clean exit/)).toBe(1);
      expect(took).toBeLessThan(5000); // 300 ms of cleanup; the kill timeout is 10 s
      expect(log).toMatch(new RegExp(`${signal} → [^;]*; relayer pid ${relayer} left out`));
      expect(log).toMatch(new RegExp(`${signal} → pid ${relayer} \\(relayer, its child gone\\)`));
      expect(log).toMatch(/stopped in .*: \d+ exited by themselves, 0 killed/);
      expect(leftovers(run)).toEqual([]);
    },
  );
});

describe('gsup -- node --max-old-space-size=512 …/tsx app.ts (tsx behind node’s options)', () => {
  it('SIGINT: the app gets it once from gsup, tsx is left out and exits with it', async () => {
    const command = ['node', '--max-old-space-size=512', TSX, fixture('app.ts'), '--cleanup', '300'];
    const { run, exit, relayer, log } = await stop(command, 'SIGINT', 'app');
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    expect(run.count(/^signal: /)).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
    expect(log).toMatch(new RegExp(`SIGINT → [^;]*; relayer pid ${relayer} left out`)); // the app (and esbuild)
    expect(exit.code).toBe(0); // tsx exits with its app's status
    expect(leftovers(run)).toEqual([]);
  });
});

describe('gsup -- tsx watch app.ts, its app restarted by a change during the stop', () => {
  it('tsx gets the signal alone (never through its group) and stops the new app itself: the stop ends in the app’s shutdown time', async () => {
    const dir = tempDir().path;
    const app = join(dir, 'app.ts');
    copyFileSync(fixture('app.ts'), app);
    const run = gsup(['-v', '-t', '10s', '--', TSX, 'watch', app, '--cleanup', '1500']);
    const first = await run.ready('app');
    const tsx = readProc(first)!.ppid;
    const sent = Date.now();
    run.signal('SIGINT');
    await run.waitForLine(/^signal: SIGINT /);
    // A change while the app cleans up: tsx watch restarts it (its own SIGTERM to the old app, then a new one).
    const later = new Date(Date.now() + 2000);
    utimesSync(app, later, later);
    const exit = await run.finished();
    const log = run.stderr.join('\n');
    // The old app: gsup's SIGINT once (and tsx's own restart SIGTERM, which is tsx's); the new one nothing from gsup.
    expect(run.count(new RegExp(`^signal: SIGINT \\(pid: ${first},`))).toBe(1);
    expect(Date.now() - sent).toBeLessThan(6000); // 1.5 s of cleanup; before: the 10 s kill timeout, then 137
    expect(log).toMatch(new RegExp(`SIGINT → pid ${tsx} \\(relayer`));
    expect(log).not.toMatch(/SIGINT → group/);
    expect(log).toMatch(/stopped in .*: \d+ exited by themselves, 0 killed/);
    expect(exit.code).not.toBe(137);
    expect(leftovers(run)).toEqual([]);
  }, 30_000);
});
