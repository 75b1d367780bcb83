import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRINTER, ROOT, Run, hostPidOfPid1, tempDir, unshareWorks } from '../helpers/gsup.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// The package as a stranger gets it: `npm pack`, installed into an empty
// folder, run from there. (dist/ is already built by `npm test`; packing
// with --ignore-scripts keeps it from being rebuilt under the other tests.)
const dir = tempDir();
let installed = '';
let files: string[] = [];

beforeAll(() => {
  const npm = (args: string[], cwd: string) =>
    execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  const [packed] = JSON.parse(
    npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir.path], ROOT),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  files = packed.files.map((file) => file.path);
  const app = join(dir.path, 'app');
  execFileSync('mkdir', ['-p', app]);
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir.path, packed.filename)], app);
  installed = join(app, 'node_modules', '.bin', 'gsup');
}, 240_000);

afterAll(() => dir.remove());

describe('the npm package', () => {
  it('holds the bin, the built code, README and LICENSE, and no sources or tests', () => {
    for (const file of [
      'bin/gsup.cjs',
      'dist/code-cache.cjs',
      'dist/inbox.cjs',
      'dist/cli.cjs',
      'dist/cli.cjs.cache',
      'dist/flags.cjs',
      'dist/listen-preload.cjs',
      'dist/index.js',
      'dist/index.d.ts',
      'README.md',
      'LICENSE',
      'package.json',
    ]) {
      expect(files).toContain(file);
    }
    expect(
      files.filter((file) => file.startsWith('src/') || file.startsWith('test/') || file.startsWith('fixtures/')),
    ).toEqual([]);
  });

  it('installs into an empty folder and runs: --version, and a signal round trip', async () => {
    expect(existsSync(installed)).toBe(true);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(execFileSync(installed, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
    const run = new Run(installed, ['-v', '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGUSR2');
    await run.waitForLine(/^signal: SIGUSR2 /);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGUSR2 /)).toBe(1);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    // Orphans are adopted: koffi works without its install script.
    expect(run.stderr.join('\n')).not.toContain('cannot become child subreaper');
  });

  // The README's warning, shown: npx exits at once on SIGTERM and leaves gsup and the app behind.
  it('`npx gsup` without a terminal: gsup warns at start; on SIGTERM npx exits at once (SIGTERM or 143) and gsup and the app run on as orphans', async () => {
    const npx = new Run('npx', ['--no-install', 'gsup', '--', 'node', PRINTER], { cwd: join(dir.path, 'app') });
    const app = await npx.ready();
    const warning = await npx.waitForLine(/^\[gsup\] started by npx \(npm exec\) with no terminal: /, {
      stream: 'stderr',
    });
    expect(warning.input).toContain('run node_modules/.bin/gsup (or exec it) instead');
    const gsupPid = Number(readFileSync(`/proc/${app}/stat`, 'latin1').split(') ')[1].split(' ')[1]);
    expect(readFileSync(`/proc/${gsupPid}/cmdline`, 'latin1')).toContain('node_modules/.bin/gsup');
    process.kill(npx.pid, 'SIGTERM');
    const exit = await npx.finished(5000);
    expect(exit.code === 143 || exit.signal === 'SIGTERM', JSON.stringify(exit)).toBe(true);
    // npx is gone; gsup and the app are not, and the app never got the SIGTERM.
    expect(isAlive(gsupPid) && isAlive(app)).toBe(true);
    expect(npx.count(/^signal: /)).toBe(0);
    // The way out: signal gsup itself (what node_modules/.bin/gsup in the image gives the runtime).
    process.kill(gsupPid, 'SIGTERM');
    await waitFor(() => !isAlive(app) && !isAlive(gsupPid), 'gsup and the app to stop', 10_000);
    // Its output still comes through the pipe npx handed down.
    await waitFor(() => npx.count(/^clean exit /) === 1, 'the app to say it exited cleanly', 5000);
    expect(npx.count(/^signal: SIGTERM /)).toBe(1);
  });

  it.skipIf(!unshareWorks)('passes the container simulation: PID 1, SIGTERM, the right exit status', async () => {
    const run = new Run(
      'unshare',
      ['--pid', '--fork', '--mount-proc', installed, '--', 'node', PRINTER, '--cleanup', '100'],
      { namespaced: true },
    );
    await run.ready();
    let pid1: number | undefined;
    await waitFor(() => (pid1 = hostPidOfPid1(run)) !== undefined, 'gsup under unshare');
    process.kill(pid1!, 'SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^clean exit/)).toBe(1);

    const failing = new Run('unshare', ['--pid', '--fork', '--mount-proc', installed, '--', 'sh', '-c', 'exit 9'], {
      namespaced: true,
    });
    expect((await failing.finished()).code).toBe(9);
  });
});
