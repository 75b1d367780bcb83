import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSmallRegularFile } from '../../../src/platform/small-file.js';
import { Pm2Supervision, findPm2Cli } from '../../../src/engine/pm2/daemons.js';
import { roots } from '../../../src/engine/tree/targets.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { Logger } from '../../../src/output/log.js';
import { ROOT } from '../../helpers/gsup.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

const GSUP = process.pid;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A God daemon of the tree (pid 300) that gsup's PM2_HOME's pid file names, with two apps. */
function pm2Setup() {
  const home = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
  dirs.push(home);
  writeFileSync(join(home, 'pm2.pid'), '300');
  const platform = new FakePlatform();
  platform.add({ pid: 300, ppid: GSUP, pgid: 300, sid: 300 }); // the God daemon, reparented to gsup
  platform.add({ pid: 301, ppid: 300, pgid: 300, sid: 300 }); // app
  platform.add({ pid: 302, ppid: 300, pgid: 300, sid: 300 }); // app
  platform.add({ pid: 400, ppid: GSUP, pgid: 400, sid: 400 }); // something else
  platform.commandLines.set(300, `PM2 v7.0.4: God Daemon (${home})`);
  const tree = new ProcessTree(platform, GSUP);
  const lines: string[] = [];
  const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line) });
  const supervision = new Pm2Supervision(
    platform,
    tree,
    logger,
    { PM2_HOME: home, PATH: '' },
    () => true,
    'pm2',
    ROOT,
    'tok',
  );
  return { platform, tree, supervision, lines, home };
}

describe('pm2 routing', () => {
  it('finds the God daemon its pid file names, with gsup’s PM2_HOME', async () => {
    const { tree, supervision, home } = pm2Setup();
    const managers = await supervision.find(await tree.look());
    expect(managers.map((manager) => [manager.info.pid, manager.kind, manager.proof?.home])).toEqual([
      [300, 'daemon', home],
    ]);
  });

  it('other signals: the God daemon alone, never its group (its apps would get them twice)', async () => {
    const { tree, supervision } = pm2Setup();
    const snapshot = await tree.look();
    const targets = roots(snapshot, 'group', 1);
    const route = supervision.route(targets, snapshot, await supervision.find(snapshot), false);
    expect(
      route.targets.map((target) => (target.kind === 'group' ? `g${target.pgid}` : `p${target.process.pid}`)).sort(),
    ).toEqual(['g400', 'p300']);
    expect(route.pm2Kill).toEqual([]);
  });

  it('a stop: pm2 kill for the daemon (the pm2 CLI of node_modules/.bin), the group signal for the rest', async () => {
    const { tree, supervision } = pm2Setup();
    const snapshot = await tree.look();
    const route = supervision.route(roots(snapshot, 'group', 1), snapshot, await supervision.find(snapshot), true);
    expect(
      route.targets.map((target) => (target.kind === 'group' ? `g${target.pgid}` : `p${target.process.pid}`)),
    ).toEqual(['g400']);
    expect(route.pm2Kill.map((manager) => manager.info.pid)).toEqual([300]);
    expect([...route.managed].sort()).toEqual([300, 301, 302]);
  });

  it('finds the pm2 CLI beside a pm2 command, on PATH, or in node_modules/.bin', () => {
    expect(findPm2Cli('pm2', { PATH: '' }, ROOT)).toMatch(/node_modules\/pm2\/bin\/pm2$/);
    expect(findPm2Cli('node_modules/.bin/pm2-runtime', { PATH: '' }, ROOT)).toMatch(/node_modules\/pm2\/bin\/pm2$/);
    expect(findPm2Cli('pm2', { PATH: '' }, '/')).toBeUndefined();
  });
});

describe('pm2 provenance: a God daemon named by the pid file is adopted only when it is the tree’s', () => {
  /** A God daemon (pid 700, start time 1700) outside the tree, named by $PM2_HOME/pm2.pid. */
  function outsideDaemon(reaping: boolean) {
    const home = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
    dirs.push(home);
    writeFileSync(join(home, 'pm2.pid'), '700');
    const platform = new FakePlatform();
    platform.add({ pid: 400, ppid: GSUP, pgid: 400, sid: 400, name: 'node' }); // the command
    const daemon = platform.add({ pid: 700, ppid: 1, pgid: 700, sid: 700, name: 'PM2 v7.0.4: God' });
    platform.commandLines.set(700, `PM2 v7.0.4: God Daemon (${home})`);
    const tree = new ProcessTree(platform, GSUP);
    const lines: string[] = [];
    const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) });
    const supervision = new Pm2Supervision(
      platform,
      tree,
      logger,
      { PM2_HOME: home, PATH: '' },
      () => reaping,
      'node',
      ROOT,
      'tok',
    );
    return { platform, tree, supervision, lines, daemon };
  }

  it('no pm2 CLI of the tree was alive when it started: not ours, logged once at -v, never a manager', async () => {
    const { tree, supervision, lines } = outsideDaemon(false);
    expect(await supervision.find(await tree.look())).toEqual([]);
    expect(await supervision.find(await tree.look())).toEqual([]);
    expect(lines.filter((line) => line.includes('is not ours'))).toHaveLength(1);
    expect(lines[0]).toMatch(
      /pm2 God daemon 700 .* is not ours: started outside the tree \(no pm2 CLI of the tree was running when it started\); never signalled/,
    );
  });

  it('a pm2 CLI of the tree lived when it started (no subreaper): adopted', async () => {
    const { platform, tree, supervision } = outsideDaemon(false);
    const cli = platform.add({ pid: 401, ppid: 400, name: 'node', startTime: 1650 });
    platform.commandLines.set(401, 'node /srv/node_modules/.bin/pm2 start app.js');
    supervision.noteClis(await tree.look()); // the CLI joins the tree…
    platform.processes.delete(cli.pid);
    platform.now = 1800;
    supervision.noteClis(await tree.look()); // …and leaves it at 1800: the daemon (1700) started within its life
    expect((await supervision.find(await tree.look())).map((manager) => manager.info.pid)).toEqual([700]);
  });

  it('a CLI that ended before the daemon started does not vouch for it', async () => {
    const { tree, supervision, platform } = outsideDaemon(false);
    supervision.cliLived({ ...platform.processes.get(400)!, startTime: 1500 }, 1600);
    expect(await supervision.find(await tree.look())).toEqual([]);
  });

  it('as PID 1 or subreaper: only a descendant is the tree’s, whatever the pid file says', async () => {
    const { tree, supervision } = outsideDaemon(true);
    supervision.cliLived(
      { pid: 401, ppid: 400, pgid: 400, sid: 400, state: 'S', startTime: 1650, name: 'node' },
      Infinity,
    );
    expect(await supervision.find(await tree.look())).toEqual([]);
  });

  it('reads a pid file without blocking, and never through a link: a FIFO, a device, a large file, a link to a pid file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
    dirs.push(dir);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    symlinkSync('/dev/zero', join(dir, 'zero'));
    writeFileSync(join(dir, 'large'), '1'.repeat(100));
    writeFileSync(join(dir, 'pid'), '123\n');
    expect(readSmallRegularFile(join(dir, 'fifo'), 64)).toBeUndefined(); // a blocking open would hang this test
    expect(readSmallRegularFile(join(dir, 'zero'), 64)).toBeUndefined();
    expect(readSmallRegularFile(join(dir, 'large'), 64)).toBeUndefined();
    expect(readSmallRegularFile(join(dir, 'pid'), 64)).toBe('123\n');
    // Whoever can write beside the pid file (a PM2_HOME the app owns) must not point gsup at another one.
    symlinkSync(join(dir, 'pid'), join(dir, 'link'));
    expect(readSmallRegularFile(join(dir, 'link'), 64)).toBeUndefined();
  });
});
