import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Pm2Supervision, findPm2Cli } from '../../../src/engine/pm2/daemons.js';
import { roots } from '../../../src/engine/tree/targets.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { Logger } from '../../../src/output/log.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

// `pm2 kill` runs only for a God daemon proven gsup's, with a pm2 CLI found once, where only root or gsup's
// user can write.

const GSUP = process.pid;
const isRoot = process.getuid?.() === 0;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
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

/** This gsup's token: its runs carry `TOKEN.1`, `TOKEN.2`… in GSUP_RUN. */
const TOKEN = 'tok3n';

/**
 * A process of the tree (pid 300, gsup's child, leading its session) titled as a God daemon of `titleHome`,
 * with an app (301) in its group; gsup's PM2_HOME is a folder of its own whose pid file names 300.
 */
function setup({
  titleHome,
  cwd = '/',
  path = '',
  verbosity = 1,
}: { titleHome?: string; cwd?: string; path?: string; verbosity?: number } = {}) {
  const home = tempDir();
  writeFileSync(join(home, 'pm2.pid'), '300');
  const platform = new FakePlatform();
  platform.add({ pid: 300, ppid: GSUP, pgid: 300, sid: 300 });
  platform.add({ pid: 301, ppid: 300, pgid: 300, sid: 300 });
  platform.commandLines.set(300, `PM2 v9: God Daemon (${titleHome ?? home})`);
  const tree = new ProcessTree(platform, GSUP);
  const lines: string[] = [];
  const logger = new Logger({ verbosity, write: (line) => lines.push(line.trim()) });
  const cliDir = tempDir();
  const env = { PM2_HOME: home, PATH: path || cliDir };
  if (!path) plantCli(cliDir);
  const supervision = new Pm2Supervision(platform, tree, logger, env, () => true, 'node', cwd, TOKEN);
  supervision.findCli(); // as the shell does once the first run is spawned
  return { platform, tree, supervision, lines, home };
}

async function stopRoute(s: ReturnType<typeof setup>) {
  const snapshot = await s.tree.look();
  const managers = await s.supervision.find(snapshot);
  return { managers, route: s.supervision.route(roots(snapshot, 'group', 1), snapshot, managers, true) };
}

/** gsup's helpers, as the stop hands them to `stop`: the `pm2 kill`s it would spawn (none is run here). */
function helpers() {
  const spawned: Array<() => number | undefined> = [];
  const children = { spawnHelper: (spawn: () => number | undefined) => spawned.push(spawn), helperExited: () => {} };
  return { spawned, children: children as never };
}

const describeTarget = (target: { kind: string; pgid?: number; process?: { pid: number } }) =>
  target.kind === 'group' ? `g${target.pgid}` : `p${target.process!.pid}`;

describe('a process that calls itself a God daemon', () => {
  it('proven (gsup’s PM2_HOME, named by its pid file, gsup’s user, the process seen): pm2 kill', async () => {
    const s = setup({ verbosity: 0 });
    const { managers, route } = await stopRoute(s);
    expect(managers[0].proof).toEqual({ home: s.home, from: 'gsup', user: undefined });
    expect(route.pm2Kill.map((manager) => manager.info.pid)).toEqual([300]);
    expect(route.targets).toEqual([]);
    const { spawned, children } = helpers();
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
    expect(spawned).toHaveLength(1);
    expect(s.platform.kills).toEqual([]);
    // What gsup decided, at the default level.
    expect(s.lines).toEqual([`[gsup] pm2 God daemon 300: pm2 kill (PM2_HOME ${s.home} from gsup's environment)`]);
  });

  type Setup = ReturnType<typeof setup>;
  const named = (pid: string) => (s: Setup) => writeFileSync(join(s.home, 'pm2.pid'), pid);
  it.each([
    ['its title names another PM2_HOME', () => {}, { titleHome: '/any/dir' }, 'its title names another PM2_HOME'],
    ['the pid file names another', named('999'), {}, 'pm2.pid does not name it'],
    ['no pid file', (s: Setup) => rmSync(join(s.home, 'pm2.pid')), {}, 'pm2.pid does not name it'],
    [
      'its real and effective ids differ',
      (s: Setup) => s.platform.users.set(300, undefined),
      {},
      'its user cannot be read (or its real and effective ids differ)',
    ],
  ])(
    '%s: a manager, not proven; the stop signal to it alone, never its group, no pm2 kill',
    async (_, change, options, why) => {
      const s = setup(options);
      change(s);
      const { managers, route } = await stopRoute(s);
      expect(managers.map((manager) => [manager.info.pid, manager.proof])).toEqual([[300, undefined]]);
      expect(managers[0].why).toContain(why);
      // Its group is pm2's: not a target; the daemon is stopped through pm2 (the machine holds it like pm2 kill).
      expect(route.targets).toEqual([]);
      expect(route.pm2Kill.map((manager) => manager.info.pid)).toEqual([300]);
      const said = s.lines.filter((line) => line.includes('calls itself a pm2 God daemon'));
      expect(said).toHaveLength(1); // once, at -v
      expect(said[0]).toMatch(/^\[gsup\] pid 300 calls itself a pm2 God daemon but is not proven gsup's: /);
      expect(said[0]).toContain(why);
      const { spawned, children } = helpers();
      await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
      await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children); // said once
      expect(spawned).toEqual([]);
      expect(s.platform.kills.slice(0, 1)).toEqual([{ pid: 300, signal: 'SIGTERM' }]); // the daemon alone
      const stopped = s.lines.filter((line) => line.includes('to it alone'));
      expect(stopped).toEqual([
        `[gsup] pm2 God daemon 300: SIGTERM to it alone, no pm2 kill (not proven gsup's: ${managers[0].why}); ` +
          'pm2 stops its apps one after another',
      ]);
    },
  );

  it('not proven: other signals too go to it alone', async () => {
    const s = setup({ titleHome: '/any/dir' });
    const snapshot = await s.tree.look();
    const managers = await s.supervision.find(snapshot);
    const route = s.supervision.route(roots(snapshot, 'group', 1), snapshot, managers, false);
    expect(route.targets.map(describeTarget)).toEqual(['p300']);
    expect(route.pm2Kill).toEqual([]);
  });

  it('no longer the process seen when proven (its pid taken by another): not proven', async () => {
    const s = setup();
    const snapshot = await s.tree.look();
    s.platform.add({ pid: 300, ppid: GSUP, pgid: 300, sid: 300, startTime: 5000 });
    const managers = await s.supervision.find(snapshot);
    expect(managers.map((manager) => [manager.proof, manager.why])).toEqual([
      [undefined, 'it is no longer the process seen'],
    ]);
  });

  it('the proof is taken at each look: a title set before the pid file is written is proven once it is', async () => {
    const s = setup();
    rmSync(join(s.home, 'pm2.pid'));
    expect((await s.supervision.find(await s.tree.look()))[0].proof).toBeUndefined();
    writeFileSync(join(s.home, 'pm2.pid'), '300');
    expect((await s.supervision.find(await s.tree.look()))[0].proof?.home).toBe(s.home);
  });

  it('at the stop, proven again: pm2 kill; no longer: the stop signal, through its identity, said by default', async () => {
    const s = setup({ verbosity: 0 });
    const { route } = await stopRoute(s);
    const { spawned, children } = helpers();
    writeFileSync(join(s.home, 'pm2.pid'), '999');
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
    expect(spawned).toEqual([]);
    expect(s.platform.kills).toEqual([{ pid: 300, signal: 'SIGTERM' }]);
    expect(s.lines).toEqual([
      `[gsup] pm2 God daemon 300: SIGTERM to it alone, no pm2 kill (no longer proven gsup's: ${join(s.home, 'pm2.pid')} ` +
        'no longer names it); pm2 stops its apps one after another',
    ]);
  });

  it('after pm2 kill its pid file goes away: not said to be unproven then', async () => {
    const s = setup();
    const { route } = await stopRoute(s);
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', helpers().children);
    rmSync(join(s.home, 'pm2.pid'));
    expect((await s.supervision.find(await s.tree.look()))[0].proof).toBeUndefined();
    expect(s.lines.filter((line) => line.includes('not proven'))).toEqual([]);
  });

  it('a God daemon whose parent lives in the tree (a nested gsup) is its parent’s: not routed at all', async () => {
    const s = setup();
    s.platform.add({ pid: 250, ppid: GSUP, pgid: 250, sid: 250 }); // the nested gsup
    s.platform.add({ pid: 300, ppid: 250, pgid: 300, sid: 300 });
    const { managers, route } = await stopRoute(s);
    expect(managers.map((manager) => manager.info.pid)).toEqual([300]);
    expect(route.pm2Kill).toEqual([]);
    expect(route.targets.map(describeTarget)).toEqual(['g250']);
  });
});

describe('a title Linux cut short (no longer than the daemon’s first command line: a long PM2_HOME)', () => {
  it('the start of gsup’s home, cut anywhere (its closing parenthesis gone): proven, pm2 kill', async () => {
    for (const keep of [1, 8, 20]) {
      const s = setup({ verbosity: 0 });
      s.platform.commandLines.set(300, `PM2 v9: God Daemon (${s.home.slice(0, keep)}`);
      const { managers, route } = await stopRoute(s);
      expect(managers[0].proof, `cut after ${keep}`).toEqual({ home: s.home, from: 'gsup', user: undefined });
      expect(route.pm2Kill.map((manager) => manager.info.pid)).toEqual([300]);
    }
  });

  it('the start of another home: not proven, the stop signal to it alone', async () => {
    const s = setup({ verbosity: 0 });
    s.platform.commandLines.set(300, 'PM2 v9: God Daemon (/elsewhere/pm2-ho');
    const { managers } = await stopRoute(s);
    expect(managers[0].proof).toBeUndefined();
    expect(managers[0].why).toContain('its title names another PM2_HOME');
  });

  it('a whole title is no prefix: the same home, and nothing longer', async () => {
    const s = setup({ verbosity: 0 });
    s.platform.commandLines.set(300, `PM2 v9: God Daemon (${s.home.slice(0, -1)})`);
    const { managers } = await stopRoute(s);
    expect(managers[0].proof).toBeUndefined();
  });
});

describe('a God daemon of another user (an app that dropped its privileges)', () => {
  it.skipIf(!isRoot)('gsup as root: proven, and pm2 kill runs as the daemon’s user and group, never more', async () => {
    const s = setup({ verbosity: 0 });
    s.platform.users.set(300, { uid: 65534, gid: 65533 });
    const { managers, route } = await stopRoute(s);
    expect(managers[0].proof).toEqual({ home: s.home, from: 'gsup', user: { uid: 65534, gid: 65533 } });
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', helpers().children);
    expect(s.lines).toEqual([
      `[gsup] pm2 God daemon 300: pm2 kill (PM2_HOME ${s.home} from gsup's environment, as uid 65534 gid 65533)`,
    ]);
  });

  it('gsup not root: not proven (it can run pm2 kill only as itself)', async () => {
    const s = setup();
    s.platform.users.set(300, { uid: 65534, gid: 65534 });
    vi.spyOn(process, 'geteuid').mockReturnValue(1000);
    vi.spyOn(process, 'getegid').mockReturnValue(1000);
    const { managers } = await stopRoute(s);
    expect(managers[0].why).toBe('it runs as uid 65534 gid 65534: gsup (uid 1000) can run pm2 kill only as itself');
  });

  it('at the stop, the daemon changed its user since the look: no pm2 kill', async () => {
    const s = setup();
    const { route } = await stopRoute(s);
    s.platform.users.set(300, { uid: 65534, gid: 65534 });
    const { spawned, children } = helpers();
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
    expect(spawned).toEqual([]);
    expect(s.platform.kills).toEqual([{ pid: 300, signal: 'SIGTERM' }]);
  });
});

describe('the home from the God daemon’s own environment (a bootstrap that exports PM2_HOME)', () => {
  /** A God daemon of the tree serving a home of its own (named by its title and its pid file), not gsup’s. */
  function exported(environ?: NodeJS.ProcessEnv) {
    const own = tempDir();
    writeFileSync(join(own, 'pm2.pid'), '300');
    const s = setup({ titleHome: own, verbosity: 0 });
    if (environ) s.platform.environs.set(300, environ);
    return { ...s, own };
  }

  it('it carries the mark of gsup’s run: its PM2_HOME is taken, and pm2 kill runs for it', async () => {
    const s = exported({ GSUP_RUN: `${TOKEN}.1 outer.2`, PM2_HOME: undefined });
    s.platform.environs.get(300)!.PM2_HOME = s.own;
    const { managers, route } = await stopRoute(s);
    expect(managers[0].proof).toEqual({ home: s.own, from: 'daemon', user: undefined });
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', helpers().children);
    expect(s.lines).toEqual([
      `[gsup] pm2 God daemon 300: pm2 kill (PM2_HOME ${s.own} from the daemon's own environment)`,
    ]);
  });

  it.each([
    ['its environment cannot be read', undefined, "no mark of gsup's runs could be read in its environment"],
    ['it carries no mark', { PM2_HOME: 'OWN' }, "no mark of gsup's runs could be read in its environment"],
    ['it carries another gsup’s mark', { GSUP_RUN: 'other.1', PM2_HOME: 'OWN' }, "no mark of gsup's runs"],
    ['its mark only looks like ours', { GSUP_RUN: `x${TOKEN}.1`, PM2_HOME: 'OWN' }, "no mark of gsup's runs"],
    ['its environment names no PM2_HOME', { GSUP_RUN: `${TOKEN}.1` }, 'its environment names no PM2_HOME'],
    ['a relative PM2_HOME', { GSUP_RUN: `${TOKEN}.1`, PM2_HOME: 'pm2' }, '(pm2) is not an absolute path'],
    ['one its title does not name', { GSUP_RUN: `${TOKEN}.1`, PM2_HOME: '/other' }, 'than its environment does'],
  ])('%s: not proven, never from its title', async (_, environ: NodeJS.ProcessEnv | undefined, why) => {
    const s = exported(environ && { ...environ });
    if (environ?.PM2_HOME === 'OWN') s.platform.environs.get(300)!.PM2_HOME = s.own;
    const { managers } = await stopRoute(s);
    expect(managers[0].proof).toBeUndefined();
    expect(managers[0].why).toContain(why);
  });

  it('a read that never answers (a process in D state) is not waited for: not proven at this look', async () => {
    const s = exported({ GSUP_RUN: `${TOKEN}.1` });
    s.platform.stuckEnvirons.add(300);
    const started = Date.now();
    const { managers } = await stopRoute(s);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(managers[0].why).toContain('its environment was not read in time');
  });

  it('read once per process: the next looks ask nothing of its environment', async () => {
    const s = exported({ GSUP_RUN: `${TOKEN}.1` });
    s.platform.environs.get(300)!.PM2_HOME = s.own;
    await stopRoute(s);
    const reads = s.platform.environReads;
    expect(reads).toBeGreaterThan(0);
    await stopRoute(s);
    expect(s.platform.environReads).toBe(reads);
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
    const supervision = new Pm2Supervision(platform, tree, logger, { PATH: '' }, () => true, 'node', '/', TOKEN);
    await tree.lines.learn([info]); // read ahead, as a look does
    expect(supervision.isManager(info)).toBe(manager);
  });
});

describe('the pm2 CLI: found once, as the command starts, where only root or gsup’s user can write', () => {
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
    const s = setup({ cwd: project, path: '/nonexistent', verbosity: 0 });
    plantCli(join(project, 'node_modules', '.bin'));
    const { managers, route } = await stopRoute(s);
    expect(managers.map((manager) => manager.info.pid)).toEqual([300]);
    expect(route.targets).toEqual([]);
    const { spawned, children } = helpers();
    await s.supervision.stop(route.pm2Kill[0], 'SIGTERM', children);
    expect(spawned).toEqual([]);
    expect(s.platform.kills).toEqual([{ pid: 300, signal: 'SIGTERM' }]); // the proven daemon alone, with the stop signal
    expect(s.lines).toEqual([
      '[gsup] pm2 God daemon 300: SIGTERM to it alone, no pm2 kill (pm2 CLI not found); pm2 stops its apps one after another',
    ]);
  });
});
