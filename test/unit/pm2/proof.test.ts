import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Pm2Supervision, findPm2Cli } from '../../../src/engine/pm2/daemons.js';
import { roots } from '../../../src/engine/tree/targets.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { Logger } from '../../../src/log.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

// `pm2 kill` runs only for a God daemon proven gsup's, with a pm2 CLI found once, where only root or gsup's
// user can write.

const GSUP = process.pid;
const isRoot = process.getuid?.() === 0;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
  dirs.push(dir);
  return dir;
}

/** An executable `pm2` in `dir` (made with its parents). */
function plantCli(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'pm2'), '#!/usr/bin/env node\n', { mode: 0o755 });
  return join(dir, 'pm2');
}

/**
 * A process of the tree (pid 300, gsup's child, leading its session) titled as a God daemon of `titleHome`,
 * with an app (301) in its group; gsup's PM2_HOME is a folder of its own whose pid file names 300.
 */
function setup({ titleHome, cwd = '/', path = '' }: { titleHome?: string; cwd?: string; path?: string } = {}) {
  const home = tempDir();
  writeFileSync(join(home, 'pm2.pid'), '300');
  const platform = new FakePlatform();
  platform.add({ pid: 300, ppid: GSUP, pgid: 300, sid: 300 });
  platform.add({ pid: 301, ppid: 300, pgid: 300, sid: 300 });
  platform.commandLines.set(300, `PM2 v9: God Daemon (${titleHome ?? home})`);
  const tree = new ProcessTree(platform, GSUP);
  const lines: string[] = [];
  const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) });
  const cliDir = tempDir();
  const env = { PM2_HOME: home, PATH: path || cliDir };
  if (!path) plantCli(cliDir);
  const supervision = new Pm2Supervision(platform, tree, logger, env, () => true, 'node', cwd);
  return { platform, tree, supervision, lines, home };
}

async function stopRoute(s: ReturnType<typeof setup>) {
  const snapshot = await s.tree.look();
  const managers = await s.supervision.find(snapshot);
  return { managers, route: s.supervision.route(roots(snapshot, 'group', 1), snapshot, managers, 'SIGTERM', true) };
}

const describeTarget = (target: { kind: string; pgid?: number; process?: { pid: number } }) =>
  target.kind === 'group' ? `g${target.pgid}` : `p${target.process!.pid}`;

describe('a process that calls itself a God daemon', () => {
  it('proven (gsup’s PM2_HOME, named by its pid file, gsup’s user, the process seen): pm2 kill', async () => {
    const { route } = await stopRoute(setup());
    expect(route.pm2Kill.map((manager) => manager.info.pid)).toEqual([300]);
    expect(route.targets).toEqual([]);
  });

  type Setup = ReturnType<typeof setup>;
  const named = (pid: string) => (s: Setup) => writeFileSync(join(s.home, 'pm2.pid'), pid);
  it.each([
    ['its title names another PM2_HOME', () => {}, { titleHome: '/any/dir' }, 'its title names another PM2_HOME'],
    ['the pid file names another', named('999'), {}, 'pm2.pid does not name it'],
    ['no pid file', (s: Setup) => rmSync(join(s.home, 'pm2.pid')), {}, 'pm2.pid does not name it'],
    ['another user', (s: Setup) => s.platform.otherUsers.add(300), {}, 'it runs as another user than gsup'],
  ])('%s: no manager, no pm2 kill; it and its group get the stop signal', async (_, change, options, why) => {
    const s = setup(options);
    change(s);
    const { managers, route } = await stopRoute(s);
    expect(managers).toEqual([]);
    expect(route.pm2Kill).toEqual([]);
    expect(route.targets.map(describeTarget)).toEqual(['g300']);
    const said = s.lines.filter((line) => line.includes('calls itself a pm2 God daemon'));
    expect(said).toHaveLength(1); // once, at -v
    expect(said[0]).toMatch(/^\[gsup\] pid 300 calls itself a pm2 God daemon but is not proven gsup's: /);
    expect(said[0]).toContain(why);
  });

  it('no longer the process seen when proven (its pid taken by another): no manager', async () => {
    const s = setup();
    const snapshot = await s.tree.look();
    s.platform.add({ pid: 300, ppid: GSUP, pgid: 300, sid: 300, startTime: 5000 });
    expect(await s.supervision.find(snapshot)).toEqual([]);
  });

  it('the proof is taken at each look: a title set before the pid file is written is proven once it is', async () => {
    const s = setup();
    rmSync(join(s.home, 'pm2.pid'));
    expect(await s.supervision.find(await s.tree.look())).toEqual([]);
    writeFileSync(join(s.home, 'pm2.pid'), '300');
    expect((await s.supervision.find(await s.tree.look())).map((manager) => manager.info.pid)).toEqual([300]);
  });

  it('at the stop, proven again: pm2 kill; no longer: the stop signal, through its identity', async () => {
    const s = setup();
    const { route } = await stopRoute(s);
    const spawned: number[] = [];
    const children = { spawnHelper: () => spawned.push(1), helperExited: () => {} } as never;
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
    expect(spawned).toEqual([1]);
    expect(s.platform.kills).toEqual([]);
    writeFileSync(join(s.home, 'pm2.pid'), '999');
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
    expect(spawned).toEqual([1]);
    expect(s.platform.kills).toEqual([{ pid: 300, signal: 'SIGTERM' }]);
  });
});

describe('pm2-runtime is recognised by the program it runs', () => {
  it.each([
    ['node /srv/node_modules/.bin/pm2-runtime start app.js', true],
    ['/usr/local/bin/node --max-old-space-size=512 /usr/lib/node_modules/pm2/bin/pm2-docker app.js', true],
    ['pm2-runtime start ecosystem.config.js', true],
    ['tail -f /var/log/pm2-runtime', false],
    ['node server.js --log /var/log/pm2-runtime', false],
    ['nodemon pm2-runtime', false],
    ['sh -c pm2-runtime start app.js', false],
  ])('%s: %s', async (commandLine, manager) => {
    const platform = new FakePlatform();
    const info = platform.add({ pid: 10, ppid: 1, name: 'node' });
    platform.commandLines.set(10, commandLine);
    const tree = new ProcessTree(platform, GSUP);
    const logger = new Logger({ verbosity: 0 });
    const supervision = new Pm2Supervision(platform, tree, logger, { PATH: '' }, () => true, 'node', '/');
    await tree.lines.learn([info]); // read ahead, as a look does
    expect(supervision.isManager(info)).toBe(manager);
  });
});

describe('the pm2 CLI: found once, before the command starts, where only root or gsup’s user can write', () => {
  it('a CLI in a folder writable by others or by its group is not taken; the next candidate is', () => {
    const base = tempDir();
    const open = plantCli(join(base, 'open', 'bin'));
    chmodSync(join(base, 'open'), 0o777);
    const grouped = plantCli(join(base, 'grouped', 'bin'));
    chmodSync(join(base, 'grouped', 'bin'), 0o775);
    const project = join(base, 'project');
    const own = plantCli(join(project, 'node_modules', '.bin'));
    expect(findPm2Cli('node', { PATH: join(base, 'open', 'bin') }, '/')).toBeUndefined();
    expect(findPm2Cli('node', { PATH: join(base, 'grouped', 'bin') }, '/')).toBeUndefined();
    const both = `${join(base, 'open', 'bin')}:${join(base, 'grouped', 'bin')}`;
    expect(findPm2Cli('node', { PATH: both }, project)).toBe(own);
    expect([open, grouped]).not.toContain(findPm2Cli('node', { PATH: join(base, 'open', 'bin') }, project));
  });

  it('a CLI that is itself writable by others is not taken; one under a sticky folder (/tmp) is', () => {
    const base = tempDir();
    const cli = plantCli(join(base, 'bin'));
    expect(findPm2Cli('node', { PATH: join(base, 'bin') }, '/')).toBe(cli);
    chmodSync(cli, 0o777);
    expect(findPm2Cli('node', { PATH: join(base, 'bin') }, '/')).toBeUndefined();
  });

  it.skipIf(!isRoot)('a CLI in a folder of another user (an app that dropped its privileges) is not taken', () => {
    const base = tempDir();
    const cli = plantCli(join(base, 'app', 'node_modules', '.bin'));
    chownSync(join(base, 'app'), 65534, 65534);
    expect(findPm2Cli('node', { PATH: '' }, join(base, 'app'))).toBeUndefined();
    chownSync(join(base, 'app'), 0, 0);
    expect(findPm2Cli('node', { PATH: '' }, join(base, 'app'))).toBe(cli);
  });

  it('a CLI put in the start directory after gsup started is never run; the stop says why there is none', async () => {
    const project = tempDir();
    const s = setup({ cwd: project, path: '/nonexistent' });
    plantCli(join(project, 'node_modules', '.bin'));
    const { managers, route } = await stopRoute(s);
    expect(managers.map((manager) => manager.info.pid)).toEqual([300]);
    expect(route.pm2Kill).toEqual([]);
    expect(route.targets.map(describeTarget)).toEqual(['p300']); // the proven daemon alone, with the stop signal
    expect(s.lines).toContain(
      '[gsup] pm2 CLI not found: stopping the God daemon with SIGTERM (pm2 then stops its apps one after another)',
    );
  });
});
