import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digest } from '../../src/engine/listen/preload-file.js';
import { heldByOwners } from '../../src/platform/trusted-path.js';
import { GSUP, Run, type RunOptions } from '../helpers/gsup.js';
import { PRELOAD } from '../helpers/hold-listen.js';
import { request } from '../helpers/listen.js';
import { afterLeakCheck } from '../helpers/leaks.js';
import { freePort } from '../helpers/net.js';
import { forAnyone } from '../helpers/anyone.js';
import { APP as PM2_APP, PM2, Pm2Home } from '../helpers/pm2.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// Where the listen preload lives, tried as an attacker would (issue 35): root gsup, an app of the tree as uid
// 65534, a root daemon of the tree that starts Node children later, and another user (uid 65533) who tries to
// create, replace or remove anything on the path those processes load — before gsup starts, while it runs, and
// after it has exited with the tree still running (--on-exit exit). Needs root (setpriv, unshare, /run).

const NODE = process.execPath;
const ATTACKER = ['--reuid=65533', '--regid=65533', '--clear-groups'];
const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];
const root = process.getuid?.() === 0;

/** Root's file for this build's preload (gsup writes it when the package's own path does not qualify). */
const runFile = () => `/run/gsup/listen-preload-${digest(readFileSync(PRELOAD))}.cjs`;

// gsup's package and the fixtures copied where every user can read them (the checkout may sit in a folder only
// root can enter), under the temp directory (sticky, open to all, as /tmp): the copy's own file does not qualify.
// Removed after this file.
const pkg = forAnyone({ gsup: true, fixtures: ['preload-app.js', 'preload-runner.js'] });
const COPY = pkg.gsup;
const APP = pkg.fixture('preload-app.js');
const RUNNER = pkg.fixture('preload-runner.js');

/** A process's environment, as /proc shows it. */
function environ(pid: number): Record<string, string> {
  const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

function gsupOf(bin: string, args: string[], options?: RunOptions): Run {
  return new Run(NODE, [bin, ...args], options);
}

/**
 * What uid 65533 manages against `path`: each step it could take, a line `done: …`; then `attacked`. It makes the
 * path's folder if it is not there and writes its own file there, unlinks or moves the file, puts a link beside
 * it, and on every directory from the file's up to / creates an entry and moves the directory away.
 */
const SCRIPT = `
p=$1
case $p in /*) ;; *) echo "not a path: $p"; exit 1 ;; esac
try() { if "$@" 2>/dev/null; then echo "done: $*"; fi; }
d=$(dirname "$p")
[ -e "$d" ] || try mkdir -p "$d"
try sh -c "printf '%s' 'process.stdout.write(\\"ATTACKER \\")' > '$p'"
try unlink "$p"
try mv "$p" "$p.moved"
try ln -s /nonexistent "$p.link"
dir=$d
while :; do
  try touch "$dir/.attacker"
  try mkdir "$dir/.attacker-dir"
  [ "$dir" = / ] && break
  try mv "$dir" "$dir.moved"
  dir=$(dirname "$dir")
done
echo attacked
`;

function attack(path: string): string[] {
  const ran = spawnSync('setpriv', [...ATTACKER, 'sh', '-c', SCRIPT, 'sh', path], { cwd: '/', encoding: 'utf8' });
  // What a step that worked (on a build that allows it) left is not left for the next test.
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    for (const name of ['.attacker', '.attacker-dir']) rmSync(join(dir, name), { recursive: true, force: true });
    if (dir === '/') break;
  }
  return ran.stdout.split('\n').filter(Boolean);
}

describe.runIf(root)("the preload's path: no other user can change what a root process of the tree loads", () => {
  const where = [
    ['the checkout (its own file, where its whole path is root’s and closed to writers)', GSUP],
    ['a package under /tmp (root’s file under /run/gsup)', COPY],
  ] as const;
  it.each(where)(
    '%s: before gsup, while it runs, and after its exit with the tree running (--on-exit exit)',
    async (_, bin) => {
      const own = realpathSync(join(dirname(bin), '..', 'dist', 'listen-preload.cjs'));
      const expected = heldByOwners(own, true) === undefined ? own : runFile();
      expect(attack(expected)).toEqual(['attacked']);
      const port = await freePort();
      const command = `"${NODE}" "${RUNNER}" & exec setpriv ${NOBODY.join(' ')} "${NODE}" "${APP}" http port`;
      const log = join(pkg.path, 'runner.log');
      const run = gsupOf(bin, ['--listen', String(port), '--on-exit', 'exit', '--', 'sh', '-c', command], {
        env: { PORT: String(port), RUNNER_LOG: log },
      });
      const runner = await run.ready('preload-runner');
      try {
        const options = (await run.waitForLine(/^node-options (.*)$/))[1];
        const path = /--require "([^"]+)"/.exec(options)?.[1];
        expect(path, run.transcript()).toMatch(/^\//);
        // The app, as uid 65534, loads it and takes the held socket.
        const app = Number((await run.waitForLine(/^listening \(pid: (\d+)/))[1]);
        expect((await request(port)).body).toBe(`pid ${app}`);
        expect(attack(path!)).toEqual(['attacked']);
        // The command ends; gsup exits and leaves the runner (root) running, its NODE_OPTIONS naming the file.
        process.kill(app, 'SIGTERM');
        expect((await run.finished()).code, run.transcript()).toBe(0);
        expect(isAlive(runner)).toBe(true);
        expect(attack(path!)).toEqual(['attacked']);
        expect(readFileSync(path!)).toEqual(readFileSync(PRELOAD));
        // The runner's next Node child starts, as root, with gsup's file and nothing else.
        process.kill(runner, 'SIGUSR2');
        const said = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
        await waitFor(() => said() !== '', "the runner's child");
        expect(said()).toBe('child: ran as 0 exit 0\n');
        expect(path).toBe(expected);
        expect(lstatSync(path!).uid).toBe(0);
      } finally {
        rmSync(log, { force: true });
        process.kill(runner, 'SIGTERM');
        await waitFor(() => !isAlive(runner), 'the runner gone');
      }
    },
  );

  it('gsup --listen -- pm2 start, gsup gone (--on-exit exit): pm2 restarts a killed app with gsup’s file', async () => {
    const pm2 = new Pm2Home();
    afterLeakCheck(() => pm2.dispose());
    const port = await freePort();
    const run = gsupOf(COPY, ['--listen', String(port), '--on-exit', 'exit', '--', PM2, 'start', PM2_APP], {
      env: pm2.env(),
    });
    await waitFor(() => pm2.readyPids().length >= 1, 'the app ready', 20_000);
    const [app] = pm2.readyPids();
    expect((await run.finished(20_000)).code, run.transcript()).toBe(0);
    const god = pm2.daemonPid()!;
    try {
      // The God daemon (root) names the file, and hands it to every app it starts.
      const path = /--require "([^"]+)"/.exec(environ(god).NODE_OPTIONS ?? '')?.[1];
      expect(path, run.transcript()).toMatch(/^\//);
      expect(attack(path!)).toEqual(['attacked']);
      process.kill(app, 'SIGKILL');
      await waitFor(() => pm2.readyPids().length >= 2, 'the app restarted by pm2', 20_000);
      const again = pm2.readyPids()[1];
      expect(environ(again).NODE_OPTIONS).toContain(`--require "${path}"`);
      expect(readFileSync(path!)).toEqual(readFileSync(PRELOAD));
      expect(path).toBe(runFile());
    } finally {
      spawnSync(NODE, [PM2, 'kill'], { env: { ...process.env, PM2_HOME: pm2.path }, stdio: 'ignore' });
    }
  }, 60_000);

  it('a command with a private /tmp (its own mount namespace) starts under --listen and takes the socket', async () => {
    // The app from a folder outside /tmp (the private /tmp hides what is under it, the checkout too when it is
    // cloned there): root's, under /run.
    const outside = mkdtempSync('/run/gsup-e2e-');
    try {
      chmodSync(outside, 0o755);
      copyFileSync(APP, join(outside, 'preload-app.mjs'));
      const port = await freePort();
      const command = `mount -t tmpfs tmpfs /tmp && exec "${NODE}" "${outside}/preload-app.mjs" http port`;
      const run = gsupOf(COPY, ['--listen', String(port), '--', 'unshare', '--mount', 'sh', '-c', command], {
        env: { PORT: String(port) },
      });
      const app = Number((await run.waitForLine(/^listening \(pid: (\d+)/))[1]);
      expect((await request(port)).body).toBe(`pid ${app}`);
      process.kill(app, 'SIGTERM');
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.stderr.filter(Boolean)).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe.runIf(root)('gsup as another user than root', () => {
  const options = `console.log("node-options " + (process.env.NODE_OPTIONS ?? ""))`;

  it('no safe place (XDG_RUNTIME_DIR unset, its package under /tmp): one line, and no preload', async () => {
    const port = await freePort();
    for (const runtime of [undefined, pkg.path]) {
      const env = runtime === undefined ? ['-u', 'XDG_RUNTIME_DIR'] : [`XDG_RUNTIME_DIR=${runtime}`];
      const args = [...NOBODY, 'env', ...env, NODE, COPY, '--listen', String(port), '--', NODE, '-e', options];
      const run = new Run('setpriv', args, { cwd: pkg.path }); // gsup starts its runs where it started
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.stdout).toEqual(['node-options ']);
      // One line (the other, at the run's end, says that no process took the socket: none could here).
      expect(run.stderr.filter((line) => line.includes('listen preload'))).toEqual([
        expect.stringMatching(
          /^\[gsup\] no safe place for the listen preload \(the package's file: .* is writable by others; .*XDG_RUNTIME_DIR.*\): runs start without the preload/,
        ),
      ]);
    }
  });

  it("its own runtime folder (0700, on a path of root's): the file there, and the app takes the socket", async () => {
    const runtime = mkdtempSync('/run/gsup-e2e-');
    try {
      chmodSync(runtime, 0o700);
      spawnSync('chown', ['65534:65534', runtime]);
      const port = await freePort();
      const args = [...NOBODY, 'env', `XDG_RUNTIME_DIR=${runtime}`, NODE, COPY, '--listen', String(port)];
      const run = new Run('setpriv', [...args, '--', NODE, APP, 'http', 'port'], {
        env: { PORT: String(port) },
        cwd: pkg.path,
      });
      const app = Number((await run.waitForLine(/^listening \(pid: (\d+)/))[1]);
      expect((await request(port)).body).toBe(`pid ${app}`);
      const file = join(runtime, 'gsup', `listen-preload-${digest(readFileSync(PRELOAD))}.cjs`);
      expect(existsSync(file)).toBe(true);
      expect([lstatSync(file).uid, lstatSync(file).mode & 0o777]).toEqual([65534, 0o444]);
      process.kill(app, 'SIGTERM');
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.stderr.filter(Boolean)).toEqual([]);
    } finally {
      rmSync(runtime, { recursive: true, force: true });
    }
  });
});
