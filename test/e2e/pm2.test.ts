import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gsup } from '../helpers/gsup.js';
import { afterLeakCheck } from '../helpers/leaks.js';
import { APP, PM2, PM2_RUNTIME, Pm2Home } from '../helpers/pm2.js';
import { isAlive, readProc, waitFor } from '../helpers/proc.js';

/** A PM2_HOME of the test's own, disposed of (pm2 kill) once the leak check has looked. */
function home(): Pm2Home {
  const created = new Pm2Home();
  afterLeakCheck(() => created.dispose());
  return created;
}

async function appsReady(pm2: Pm2Home, count: number): Promise<number[]> {
  await waitFor(() => pm2.readyPids().length >= count, `${count} apps to be ready`, 20_000);
  return pm2.readyPids();
}

describe('gsup -- pm2 start', () => {
  it('cluster mode -i 4: one signal per app, none restarted, stopped in parallel, God gone, exit 0', async () => {
    const pm2 = home();
    const run = gsup(['-v', '--', PM2, 'start', APP, '-i', '4'], { env: pm2.env() });
    const apps = await appsReady(pm2, 4);
    // pm2's CLI exited at once; gsup stays and supervises the God daemon.
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const god = pm2.daemonPid()!;
    expect(readProc(god)?.ppid).toBe(run.pid); // adopted as subreaper child
    const sent = Date.now();
    run.signal('SIGTERM');
    const exit = await run.finished(20_000);
    const took = Date.now() - sent;
    expect(exit.code).toBe(0);
    for (const pid of apps) {
      expect(pm2.signals(pid), `app ${pid}`).toEqual(['SIGINT']);
      expect(pm2.lines()).toContain(`clean exit ${pid}`);
    }
    expect(pm2.readyPids()).toEqual(apps); // no app restarted: no new pid
    // ... and pm2 logged each start once, no restart.
    expect(pm2.pm2Log().match(/starting in -cluster mode-/g)).toHaveLength(4);
    expect(pm2.pm2Log()).not.toMatch(/restart/i);
    // In parallel: every app had its signal before any had cleaned up (1 s each; the log is in the order things
    // happened). One after another, the first would have ended before the second got its signal.
    const order = pm2.lines().filter((line) => /^(signal SIGINT|clean exit) /.test(line));
    expect(
      order.slice(0, 4).map((line) => line.split(' ')[0]),
      order.join('\n'),
    ).toEqual(Array(4).fill('signal'));
    // And a generous bound on the whole: about one cleanup and the pm2 CLI's start (1.2 s idle, 3.8 s seen with every
    // core busy); the figure itself belongs to the bench.
    expect(took).toBeLessThan(10_000);
    expect(isAlive(god)).toBe(false);
    expect(existsSync(join(pm2.path, 'pm2.pid'))).toBe(false);
    // -v names the God daemon and the apps it stops.
    const log = run.stderr.join('\n');
    expect(log).toContain(`SIGTERM → pm2 God daemon ${god} (pm2 kill)`);
    for (const pid of apps) expect(log).toContain(`${pid} (node ${APP})`);
  }, 40_000);

  it('a long PM2_HOME (the God daemon’s title cut short by Linux): still one signal per app, none restarted', async () => {
    const pm2 = home();
    // Linux keeps a title no longer than the daemon's first command line: this home loses its end there.
    const long = join(pm2.path, 'a-pm2-home-whose-path-is-longer-than-the-daemons-own-command-line');
    mkdirSync(long);
    afterLeakCheck(() => {
      // A daemon the test left (it failed before the stop): pm2 kill for this home too.
      if (existsSync(join(long, 'pm2.pid'))) {
        execFileSync(process.execPath, [PM2, 'kill'], { env: { ...process.env, PM2_HOME: long }, stdio: 'ignore' });
      }
    });
    const run = gsup(['--', PM2, 'start', APP, '-i', '2'], { env: pm2.env({ PM2_HOME: long }) });
    const apps = await appsReady(pm2, 2);
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const god = Number(readFileSync(join(long, 'pm2.pid'), 'utf8'));
    expect(readFileSync(`/proc/${god}/cmdline`, 'utf8')).not.toContain(long); // cut short indeed
    run.signal('SIGTERM');
    expect((await run.finished(20_000)).code).toBe(0);
    for (const pid of apps) expect(pm2.signals(pid), `app ${pid}`).toEqual(['SIGINT']);
    expect(pm2.readyPids()).toEqual(apps);
    expect(run.stderr.join('\n')).toContain(
      `pm2 God daemon ${god}: pm2 kill (PM2_HOME ${long} from gsup's environment)`,
    );
  }, 40_000);

  it('fork mode, an app with children of its own: nothing left behind', async () => {
    const pm2 = home();
    const run = gsup(['--', PM2, 'start', APP], { env: pm2.env({ CHILDREN: '2', CLEANUP_MS: '200' }) });
    const [app] = await appsReady(pm2, 1);
    await waitFor(() => pm2.lines().filter((line) => line.startsWith('child ')).length === 2, 'the app’s children');
    const children = pm2.lines().flatMap((line) => (line.startsWith('child ') ? [Number(line.split(' ')[1])] : []));
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    run.signal('SIGINT');
    expect((await run.finished(20_000)).code).toBe(0);
    expect(pm2.signals(app)).toEqual(['SIGINT']);
    for (const pid of [app, ...children]) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  }, 40_000);

  it('an app that ignores signals is SIGKILLed at -t 5s and named in the summary', async () => {
    const pm2 = home();
    // pm2's own kill_timeout is longer, so the kill is gsup's. 5 s: time for `pm2 kill` (a pm2 CLI start,
    // over 2 s with every core busy) to give each app its SIGINT first.
    const run = gsup(['-t', '5s', '--', PM2, 'start', APP, '-i', '2', '--kill-timeout', '20000'], {
      env: pm2.env({ IGNORE_STOP: '1' }),
    });
    const apps = await appsReady(pm2, 2);
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const sent = Date.now();
    run.signal('SIGTERM');
    await run.finished(20_000);
    const took = Date.now() - sent;
    expect(took).toBeGreaterThanOrEqual(5000);
    expect(took).toBeLessThan(8000);
    const summary = run.stderr.find((line) => line.includes('stopped in'))!;
    for (const pid of apps) {
      expect(summary).toContain(`${pid} (node ${APP})`);
      expect(pm2.signals(pid)).toEqual(['SIGINT']);
      expect(isAlive(pid)).toBe(false);
    }
  }, 40_000);

  it('SIGUSR2 goes to the God daemon alone, which reopens pm2’s logs: -v says just that, and no app gets it', async () => {
    const pm2 = home();
    const run = gsup(['-v', '--', PM2, 'start', APP, '-i', '2'], { env: pm2.env({ CLEANUP_MS: '100' }) });
    const apps = await appsReady(pm2, 2);
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const god = pm2.daemonPid()!;
    run.signal('SIGUSR2');
    const { input: line } = await run.waitForLine(new RegExp(`SIGUSR2 → pm2 God daemon ${god}\\b`), {
      stream: 'stderr',
    });
    expect(line).toBe(`[gsup] SIGUSR2 → pm2 God daemon ${god}, which reopens pm2's logs; its apps are not signalled`);
    await waitFor(() => pm2.pm2Log().includes('Reloading logs'), 'pm2 to reopen its logs', 10_000);
    run.signal('SIGTERM');
    expect((await run.finished(20_000)).code).toBe(0);
    for (const pid of apps) expect(pm2.signals(pid), `app ${pid}`).toEqual(['SIGINT']); // the stop's, and no SIGUSR2
  }, 40_000);

  it('--no-subreaper: the God daemon, reparented to init, is found by its pid file, adopted, and stopped with pm2 kill', async () => {
    const pm2 = home();
    const run = gsup(['-v', '--no-subreaper', '--', PM2, 'start', APP, '-i', '2'], { env: pm2.env() });
    const apps = await appsReady(pm2, 2);
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const god = pm2.daemonPid()!;
    expect(readProc(god)?.ppid).not.toBe(run.pid); // not gsup's: only the pid file leads to it
    run.signal('SIGTERM');
    expect((await run.finished(20_000)).code).toBe(0);
    for (const pid of apps) {
      expect(pm2.signals(pid), `app ${pid}`).toEqual(['SIGINT']);
      expect(isAlive(pid)).toBe(false);
    }
    expect(run.stderr.join('\n')).toContain(`SIGTERM → pm2 God daemon ${god} (pm2 kill)`);
    await waitFor(() => !isAlive(god), 'the God daemon to be gone');
  }, 40_000);

  it('a God daemon that was running before gsup started is not adopted and never signalled; gsup warns at the default level', async () => {
    const pm2 = home();
    // The older daemon runs under a gsup of its own, which reaps it at the end.
    const outer = gsup(['--on-exit', 'wait', '--', PM2, 'start', APP, '--name', 'older'], { env: pm2.env() });
    const [older] = await appsReady(pm2, 1);
    await outer.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const god = pm2.daemonPid()!;
    // No -v: gsup ends at once (pm2's CLI handed the app to that daemon), and says why.
    const run = gsup(['--', PM2, 'start', APP, '--name', 'newer'], { env: pm2.env() });
    const exit = await run.finished(20_000);
    expect(exit.code).toBe(0);
    const [, newer] = await appsReady(pm2, 2);
    expect(run.stderr.filter((line) => line.startsWith('[gsup]'))).toEqual([
      `[gsup] pm2 God daemon ${god} (PM2_HOME ${pm2.path}) is not ours: started outside the tree (as subreaper or PID 1, gsup is the ancestor of every daemon of its tree); never signalled nor waited for: its apps are not supervised (give pm2 a PM2_HOME of its own, or run pm2-runtime)`,
    ]);
    expect(isAlive(god)).toBe(true);
    expect(pm2.signals(older)).toEqual([]);
    expect(pm2.signals(newer)).toEqual([]);
    // The older daemon's own gsup stops it (and the app the newer gsup handed to it).
    outer.signal('SIGTERM');
    expect((await outer.finished(20_000)).code).toBe(0);
    expect(isAlive(god)).toBe(false);
  }, 40_000);
});

describe('a bootstrap script that starts pm2 and stops it in a trap', () => {
  it('the script gets the stop signal and runs its own pm2 kill; gsup runs none: each app one signal, the script’s status', async () => {
    const pm2 = home();
    const script = `${PM2} start ${APP} -i 2 >/dev/null; trap '${PM2} kill >/dev/null; exit 7' TERM INT; echo trapped; while sleep 1; do :; done`;
    const run = gsup(['-v', '--', 'sh', '-c', script], { env: pm2.env({ CLEANUP_MS: '300' }) });
    const apps = await appsReady(pm2, 2);
    const god = pm2.daemonPid()!;
    await run.waitForLine(/^trapped$/); // pm2 start has returned: the trap is set
    run.signal('SIGTERM');
    expect((await run.finished(20_000)).code, run.transcript()).toBe(7);
    for (const pid of apps) {
      expect(pm2.signals(pid), `app ${pid}\n${pm2.lines().join('\n')}\n${run.transcript()}`).toEqual(['SIGINT']);
      expect(pm2.lines()).toContain(`clean exit ${pid}`);
    }
    expect(isAlive(god), run.transcript()).toBe(false);
    expect(run.stderr.join('\n')).not.toContain('(pm2 kill)');
  }, 40_000);

  it('a script that leaves the daemon running when it exits: gsup’s pm2 kill stops it then', async () => {
    const pm2 = home();
    const script = `${PM2} start ${APP} -i 2 >/dev/null; trap 'exit 0' TERM; echo trapped; while sleep 1; do :; done`;
    const run = gsup(['-v', '--', 'sh', '-c', script], { env: pm2.env({ CLEANUP_MS: '300' }) });
    const apps = await appsReady(pm2, 2);
    const god = pm2.daemonPid()!;
    await run.waitForLine(/^trapped$/); // pm2 start has returned: the trap is set
    run.signal('SIGTERM');
    expect((await run.finished(20_000)).code, run.transcript()).toBe(0);
    for (const pid of apps)
      expect(pm2.signals(pid), `app ${pid}\n${pm2.lines().join('\n')}\n${run.transcript()}`).toEqual(['SIGINT']);
    expect(isAlive(god), run.transcript()).toBe(false);
    expect(run.stderr.join('\n')).toContain(`SIGTERM → pm2 God daemon ${god} (pm2 kill)`);
  }, 40_000);
});

describe('gsup -- pm2-runtime start', () => {
  it('SIGTERM: each app one signal, a clean exit, no leftovers', async () => {
    const pm2 = home();
    const run = gsup(['--', PM2_RUNTIME, 'start', APP, '-i', '2'], { env: pm2.env({ CLEANUP_MS: '300' }) });
    const apps = await appsReady(pm2, 2);
    run.signal('SIGTERM');
    expect((await run.finished(20_000)).code).toBe(0);
    for (const pid of apps) {
      expect(pm2.signals(pid), `app ${pid}`).toEqual(['SIGINT']);
      expect(pm2.lines()).toContain(`clean exit ${pid}`);
      expect(isAlive(pid)).toBe(false);
    }
    expect(pm2.readyPids()).toEqual(apps);
  }, 40_000);
});

// World premise, not gsup: pm2's own behaviour. gsup stops a God daemon with `pm2 kill` (apps in parallel, one
// SIGINT each) rather than with a SIGTERM to the daemon, because the daemon's own SIGTERM path stops its apps one
// after another (docs/pm2.md). Should pm2 make that path parallel, this fails, and the choice can be revisited; gsup
// is not wrong then.
describe('world premise: pm2’s own SIGTERM path', () => {
  it('for comparison: the God daemon’s own SIGTERM path stops -i 4 apps one after another (over 4 s)', async () => {
    const pm2 = home();
    // gsup stays (wait) as the God daemon's parent, so it is reaped at the end.
    const run = gsup(['--on-exit', 'wait', '--', PM2, 'start', APP, '-i', '4'], { env: pm2.env() });
    await appsReady(pm2, 4);
    await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
    const god = pm2.daemonPid()!;
    const sent = Date.now();
    process.kill(god, 'SIGTERM');
    await waitFor(() => !isAlive(god), 'the God daemon to exit', 20_000);
    expect(Date.now() - sent).toBeGreaterThan(4000);
    await run.finished();
  }, 40_000);
});
