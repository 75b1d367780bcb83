import { chownSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forAnyone } from '../helpers/anyone.js';
import { CAP_SYS_PTRACE, DROP, capEff, dropWorks, gsupAsPid1WithDockerCaps } from '../helpers/caps.js';
import { Run, gsup, hostPidOfPid1, tempDir } from '../helpers/gsup.js';
import { afterLeakCheck } from '../helpers/leaks.js';
import { APP, PM2, Pm2Home } from '../helpers/pm2.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// pm2 homes gsup's own environment does not name, and pm2 under a dropped user: each app gets exactly one
// signal at the stop and none is restarted, and gsup says at the default level how it stopped the God daemon.

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** A PM2_HOME of the test's own (`owner`: chowned to that uid), disposed of (pm2 kill) once the leak check has looked. */
function home(owner?: number): Pm2Home {
  const created = new Pm2Home();
  if (owner !== undefined) chownSync(created.path, owner, owner);
  afterLeakCheck(() => created.dispose());
  return created;
}

/**
 * gsup's own environment without PM2_HOME: its home is then $HOME/.pm2, with HOME a folder of the test's
 * (never ~/.pm2); the app's log goes to the home the command sets.
 */
function withoutHome(pm2: Pm2Home, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const elsewhere = tempDir();
  afterLeakCheck(elsewhere.remove);
  return { ...pm2.env(extra), PM2_HOME: undefined, HOME: elsewhere.path };
}

/** A bootstrap script (in a folder of its own, run by its path) that exports PM2_HOME and starts two apps. */
function bootstrap(pm2: Pm2Home, start = `${PM2} start ${APP} -i 2`): string {
  const dir = tempDir();
  afterLeakCheck(dir.remove);
  const script = join(dir.path, 'bootstrap.sh');
  writeFileSync(script, `#!/bin/sh\nexport PM2_HOME=${pm2.path}\n${start} >/dev/null\n`, { mode: 0o755 });
  return script;
}

/**
 * pm2 and the app as nobody: their copies, where nobody can read them (the checkout may sit in a 0700 folder). gsup
 * starts in the copy, and finds its pm2 first on PATH: the `pm2 kill` it runs as nobody is that copy's too.
 */
function asNobody(pm2: Pm2Home, own: boolean, env: NodeJS.ProcessEnv) {
  const copy = forAnyone({ fixtures: ['app.js'], packages: ['pm2'] });
  const home = own ? [] : ['env', `PM2_HOME=${pm2.path}`];
  return {
    command: [...DROP, ...home, copy.bin('pm2'), 'start', copy.fixture('app.js'), '-i', '2'],
    options: { env: { ...env, PATH: `${dirname(copy.bin('pm2'))}:${process.env.PATH}` }, cwd: copy.path },
  };
}

async function appsReady(pm2: Pm2Home, count: number): Promise<number[]> {
  await waitFor(() => pm2.readyPids().length >= count, `${count} apps to be ready`, 20_000);
  return pm2.readyPids();
}

/** SIGTERM once the apps run and the command is gone (gsup supervises the God daemon): each app's one SIGINT. */
async function stopAndCheck(run: Run, pm2: Pm2Home, signalled: () => number = () => run.pid) {
  const apps = await appsReady(pm2, 2);
  await run.waitForLine(/waiting for \d+ remaining process/, { stream: 'stderr' });
  const god = pm2.daemonPid()!;
  process.kill(signalled(), 'SIGTERM');
  const exit = await run.finished(20_000);
  const context = `${pm2.lines().join('\n')}\n${run.transcript()}`;
  expect(exit.code, context).toBe(0);
  for (const pid of apps) {
    expect(pm2.signals(pid), `app ${pid}\n${context}`).toEqual(['SIGINT']);
    expect(pm2.lines()).toContain(`clean exit ${pid}`);
  }
  expect(pm2.readyPids(), context).toEqual(apps); // no app restarted: no new pid
  expect(pm2.pm2Log().match(/starting in -cluster mode-/g)).toHaveLength(2);
  expect(pm2.pm2Log()).not.toMatch(/restart/i);
  const said = run.stderr.filter((line) => line.startsWith('[gsup]'));
  // The summary: no app killed, and at least the God daemon and its two apps seen ending (pm2 may run a `ps`).
  const summary = said.map((line) => /stopped in \S+: (\d+) exited by themselves, 0 killed$/.exec(line)).find(Boolean);
  expect(summary, context).toBeTruthy();
  expect(Number(summary![1])).toBeGreaterThanOrEqual(3);
  return { god, said, context };
}

describe('a bootstrap script that exports PM2_HOME (not in gsup’s own environment)', () => {
  it('SIGTERM: pm2 kill for the home in the God daemon’s own environment; one signal per app, none restarted, said by default', async () => {
    const pm2 = home();
    const run = gsup(['--', bootstrap(pm2)], { env: withoutHome(pm2, { CLEANUP_MS: '300' }) });
    const { god, said, context } = await stopAndCheck(run, pm2);
    expect(said, context).toContain(
      `[gsup] pm2 God daemon ${god}: pm2 kill (PM2_HOME ${pm2.path} from the daemon's own environment)`,
    );
    expect(said.filter((line) => line.includes('God daemon'))).toHaveLength(1);
    expect(isAlive(god)).toBe(false);
  }, 40_000);

  it('a God daemon gsup cannot prove (its environment has no mark of gsup’s runs): the stop signal to it alone, one signal per app, said once', async () => {
    const pm2 = home();
    // The mark removed on the way: gsup cannot tell this daemon's home from any other's.
    const script = bootstrap(pm2, `env -u GSUP_RUN ${PM2} start ${APP} -i 2`);
    const env = withoutHome(pm2, { CLEANUP_MS: '300' });
    const run = gsup(['--', script], { env });
    const { god, said, context } = await stopAndCheck(run, pm2);
    const gsupHome = join(env.HOME!, '.pm2');
    expect(
      said.filter((line) => line.includes(`pm2 God daemon ${god}`)),
      context,
    ).toEqual([
      `[gsup] pm2 God daemon ${god}: SIGTERM to it alone, no pm2 kill (not proven gsup's: its title names another ` +
        `PM2_HOME than ${gsupHome}, and no mark of gsup's runs could be read in its environment); ` +
        'pm2 stops its apps one after another',
    ]);
    expect(isAlive(god)).toBe(false);
  }, 40_000);
});

describe.skipIf(!isRoot)('pm2 under a dropped user (uid 65534), gsup root', () => {
  it.each([
    ['PM2_HOME in gsup’s environment', "gsup's environment"],
    ['PM2_HOME set for the command only', "the daemon's own environment"],
  ])(
    '%s: pm2 kill as the daemon’s user; one signal per app, none restarted',
    async (how, source) => {
      const pm2 = home(NOBODY);
      const own = source.startsWith('gsup');
      const env = own ? pm2.env({ CLEANUP_MS: '300' }) : withoutHome(pm2, { CLEANUP_MS: '300' });
      const { command, options } = asNobody(pm2, own, env);
      const run = gsup(['--', ...command], options);
      const { god, said, context } = await stopAndCheck(run, pm2);
      expect(said, `${how}\n${context}`).toContain(
        `[gsup] pm2 God daemon ${god}: pm2 kill (PM2_HOME ${pm2.path} from ${source}, as uid ${NOBODY} gid ${NOBODY})`,
      );
    },
    40_000,
  );
});

// As PID 1 with Docker's capabilities (no CAP_SYS_PTRACE): root cannot read the environment of another user's
// process. The daemon's mark is unreadable, so it is the tree's (provenance fails toward the tree), and its home
// can only come from gsup's own environment. (Without CAP_SYS_PTRACE alone, root keeps CAP_SYS_ADMIN, with which
// Linux 6.x still lets it read: not Docker's case.)
describe.skipIf(!dropWorks)('pm2 under a dropped user, gsup PID 1 with Docker’s capabilities', () => {
  it.each([
    ['PM2_HOME in gsup’s environment: pm2 kill as the daemon’s user', true],
    ['PM2_HOME set for the command only: not proven, the stop signal to the God daemon alone', false],
  ])(
    '%s; one signal per app, none restarted',
    async (_, own) => {
      const pm2 = home(NOBODY);
      const env = own ? pm2.env({ CLEANUP_MS: '300' }) : withoutHome(pm2, { CLEANUP_MS: '300' });
      const { command, options } = asNobody(pm2, own, env);
      const run = gsupAsPid1WithDockerCaps(['--', ...command], options);
      let gsupPid: number | undefined;
      await waitFor(() => (gsupPid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
      // setpriv names gsup among its arguments: wait until it has dropped the capabilities and run node.
      const program = () => readFileSync(`/proc/${gsupPid}/cmdline`, 'utf8').split('\0')[0];
      await waitFor(() => program() === process.execPath, 'setpriv to exec gsup');
      expect(capEff(gsupPid!) & (1n << BigInt(CAP_SYS_PTRACE))).toBe(0n);
      const { said, context } = await stopAndCheck(run, pm2, () => gsupPid!);
      const decided = said.filter((line) => /pm2 God daemon \d+: /.test(line));
      expect(decided, context).toHaveLength(1);
      expect(decided[0]).toMatch(
        own
          ? new RegExp(`: pm2 kill \\(PM2_HOME ${pm2.path} from gsup's environment, as uid ${NOBODY} gid ${NOBODY}\\)$`)
          : new RegExp(
              ": SIGTERM to it alone, no pm2 kill \\(not proven gsup's: its title names another PM2_HOME than .*, " +
                "and no mark of gsup's runs could be read in its environment \\(EACCES\\)\\); " +
                'pm2 stops its apps one after another$',
            ),
      );
    },
    40_000,
  );
});
