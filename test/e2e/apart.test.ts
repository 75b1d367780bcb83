import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup, gsupAsPid1, hostPidOfPid1, unshareWorks } from '../helpers/gsup.js';
import { freePort } from '../helpers/net.js';
import { isAlive, waitFor } from '../helpers/proc.js';
import { forAnyone } from '../helpers/anyone.js';
import { dropWorks, gsupAsPid1WithDockerCaps } from '../helpers/caps.js';

// gsup is a Node program started with the app's environment: NODE_OPTIONS is
// the app's (an APM preload, --inspect), and must not become gsup's.

const PRELOAD = fixture('preload.cjs');
const PRELOAD_ESM = fixture('preload.mjs');
const preloaded = (extra: NodeJS.ProcessEnv = {}) => ({ NODE_OPTIONS: `--require ${PRELOAD}`, ...extra });

async function pid1(run: ReturnType<typeof gsupAsPid1>): Promise<number> {
  let pid: number | undefined;
  await waitFor(() => (pid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
  return pid!;
}

/** The environment a process's current image started with. */
function environOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
}

describe.skipIf(!unshareWorks)('a preload in NODE_OPTIONS, gsup as PID 1', () => {
  it('SIGTERM stops the tree (the preload listens for SIGTERM too): the app gets it once, and the preload ran in the app', async () => {
    const run = gsupAsPid1(['--', 'node', PRINTER, '--cleanup', '100'], { env: preloaded() });
    await run.ready();
    const gsupPid = await pid1(run);
    expect(environOf(gsupPid).filter((line) => line.startsWith('NODE_OPTIONS='))).toEqual([]);
    process.kill(gsupPid, 'SIGTERM');
    const exit = await run.finished(10_000);
    expect(exit.code, run.transcript()).toBe(0);
    expect(run.count(/^signal: SIGTERM /), run.transcript()).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
    // Loaded in gsup's first image, then the app's (pid 2 and up); the preload's handler heard it only in the app.
    expect(
      run.stderr.filter((line) => /^preload: SIGTERM \(pid: 1\)/.test(line)),
      run.transcript(),
    ).toEqual([]);
    expect(run.stderr.filter((line) => /^preload: SIGTERM /.test(line))).toHaveLength(1);
  });

  it("a preload on gsup's own node command line (node -r …, kept: it is not the app's): its SIGTERM handle does not leave gsup deaf", async () => {
    const run = gsupAsPid1(['--', 'node', PRINTER], { node: ['--require', PRELOAD] });
    await run.ready();
    process.kill(await pid1(run), 'SIGTERM');
    const exit = await run.finished(10_000);
    expect(exit.code, run.transcript()).toBe(0);
    expect(run.count(/^signal: SIGTERM /), run.transcript()).toBe(1);
  });

  it.each([
    ['listens for SIGTERM', {}],
    ['has no signal handler', { PRELOAD_NO_HANDLER: '1' }],
  ])(
    'a SIGTERM while a preload that %s is still loading is not lost: the command is never started, 143',
    async (_, extra) => {
      const run = gsupAsPid1(['-v', '--', 'node', PRINTER], { env: preloaded({ PRELOAD_HOLD_MS: '1500', ...extra }) });
      await run.waitForLine(/^preload holding \(pid: 1\)$/, { stream: 'stderr', timeoutMs: 10_000 });
      process.kill(await pid1(run), 'SIGTERM');
      const exit = await run.finished(10_000);
      expect(exit.code, run.transcript()).toBe(143);
      expect(run.stderr.join('\n')).toMatch(/SIGTERM received before the command started: not starting it/);
      expect(run.count(/^ready /), run.transcript()).toBe(0);
    },
  );

  it.each([
    ['--require', PRELOAD],
    ['--import', PRELOAD_ESM],
  ])(
    'a SIGTERM while a preload (%s) whose listener exits, as OpenTelemetry’s does, is still loading: gsup has it, not the preload; the command is never started, 143',
    async (option, file) => {
      const env = { NODE_OPTIONS: `${option} ${file}`, PRELOAD_HOLD_MS: '1500', PRELOAD_EXIT_ON_STOP: '1' };
      const run = gsupAsPid1(['--', 'node', PRINTER], { env });
      await run.waitForLine(/^preload holding \(pid: 1\)$/, { stream: 'stderr', timeoutMs: 10_000 });
      process.kill(await pid1(run), 'SIGTERM');
      const exit = await run.finished(10_000);
      expect(exit.code, run.transcript()).toBe(143);
      expect(run.stderr.join('\n')).toMatch(/SIGTERM received before the command started: not starting it/);
      expect(
        run.stderr.filter((line) => line.startsWith('preload: ')),
        run.transcript(),
      ).toEqual([]);
      expect(run.count(/^ready /), run.transcript()).toBe(0);
      // As PID 1 a signal before its listener was in is lost (Node's start-up handler, PID 1 ignoring the rest): said.
      expect(run.stderr.filter((line) => /a preload in NODE_OPTIONS listens for SIGTERM/.test(line))).toHaveLength(1);
    },
  );

  // Forged, or inherited: as PID 1 the pid in it is always right, the start time is not.
  it.each([
    ['held', '{"pid":1,"held":["SIGTERM"],"armed":true}'],
    ['NODE_OPTIONS', '{"pid":1,"start":"1","nodeOptions":"--require /nonexistent/forged.cjs"}'],
    ['parent', '{"pid":1,"start":"0","ppid":999999}'],
  ])('a forged GSUP_APART (%s) changes nothing as PID 1: the command starts and sees neither', async (_, note) => {
    const script = 'echo "started: ${NODE_OPTIONS-none} ${GSUP_APART-none}"';
    const run = gsupAsPid1(['-p', 'SIGTERM', '--', 'sh', '-c', script], { env: { GSUP_APART: note } });
    const exit = await run.finished();
    expect(exit.code, run.transcript()).toBe(0);
    expect(run.stdout).toEqual(['started: none none']);
    expect(run.stderr, run.transcript()).toEqual([]);
  });
});

describe('a child a preload started in gsup’s first image (it outlives the start again without NODE_OPTIONS)', () => {
  it('is not waited for, and its status is not gsup’s: gsup ends with the command', async () => {
    const env = preloaded({ PRELOAD_CHILD_MS: '10000' });
    const run = gsup(['-v', '--', 'sh', '-c', 'sleep 0.3; exit 0'], { env });
    const child = await run.ready('preload-child');
    const exit = await run.finished();
    expect(exit.code, run.transcript()).toBe(0);
    // Not gsup's to stop (nor, away from PID 1, the kernel's): it lives on until it ends, or this test ends it.
    expect(isAlive(child)).toBe(true);
    process.kill(child, 'SIGKILL');
    await waitFor(() => !isAlive(child), 'the preload’s child to end');
    // gsup was gone before the child's end (its status, 7, came later), and never signalled it.
    expect(run.count(/^exiting \(code: 7, .*preload-child\)$/), run.transcript()).toBe(0);
    expect(run.count(/^signal: /), run.transcript()).toBe(0);
    const said = run.stderr.join('\n');
    expect(said).toMatch(/is not the tree's: gsup's own child from before its first spawn/);
    expect(said).not.toMatch(/waiting for/);
  });

  it.skipIf(!dropWorks)(
    'as PID 1 with Docker’s capabilities, one that drops to another user (its mark unreadable): not the tree’s either',
    async () => {
      const dir = forAnyone({ fixtures: ['printer.js', 'preload.cjs'] });
      try {
        const env = {
          NODE_OPTIONS: `--require ${dir.fixture('preload.cjs')}`,
          PRELOAD_CHILD_MS: '10000',
          PRELOAD_CHILD_DROP: '65534',
        };
        const run = gsupAsPid1WithDockerCaps(['-v', '--', 'sh', '-c', 'sleep 0.3; exit 0'], { env });
        await run.ready('preload-child');
        const exit = await run.finished();
        expect(exit.code, run.transcript()).toBe(0);
        expect(run.count(/^exiting \(code: 7, .*preload-child\)$/), run.transcript()).toBe(0);
        expect(run.count(/^signal: /), run.transcript()).toBe(0);
        expect(run.stderr.join('\n')).not.toMatch(/waiting for/);
      } finally {
        dir.remove();
      }
    },
  );
});

describe("NODE_OPTIONS stays the app's", () => {
  it('the command gets NODE_OPTIONS unchanged, and gsup itself runs without it', async () => {
    const options = `--require ${PRELOAD} --max-old-space-size=100`;
    const script =
      'console.log("options:", process.env.NODE_OPTIONS, "apart:", process.env.GSUP_APART); process.on("SIGTERM", () => process.exit(0)); setInterval(() => {}, 1000)';
    const run = gsup(['--', 'node', '-e', script], { env: { NODE_OPTIONS: options } });
    await run.waitForLine(/^options: /);
    expect(run.stdout[0]).toBe(`options: ${options} apart: undefined`);
    expect(environOf(run.pid).filter((line) => line.startsWith('NODE_OPTIONS='))).toEqual([]);
    run.signal('SIGTERM');
    await run.finished();
  });

  it.each(['null', '[1]', '{"held":["SIGKILL","SIGSTOP","SIGTERM"]}', '{"pid":1,"held":["SIGTERM"]}', 'not json'])(
    'a GSUP_APART gsup did not write itself (%s) is dropped: no stack trace, nothing taken as received',
    async (note) => {
      const run = gsup(['--', 'sh', '-c', 'echo "started: ${GSUP_APART-none}"'], { env: { GSUP_APART: note } });
      const exit = await run.finished();
      expect(exit.code, run.transcript()).toBe(0);
      expect(run.stdout).toEqual(['started: none']);
      expect(run.stderr, run.transcript()).toEqual([]);
    },
  );

  it.each([
    ['--require', 0, PRELOAD],
    ['--import', 1, PRELOAD_ESM],
  ])(
    'a preload (%s) that listens for SIGTERM, not PID 1: warned of (%i) only where a signal could have gone to it alone',
    async (option, warned, file) => {
      const run = gsup(['--', 'true'], { env: { NODE_OPTIONS: `${option} ${file}` } });
      expect((await run.finished()).code, run.transcript()).toBe(0);
      const warning = /^\[gsup\] a preload in NODE_OPTIONS listens for SIGTERM\/SIGINT: .*docs\/limits\.md/;
      expect(
        run.stderr.filter((line) => warning.test(line)),
        run.transcript(),
      ).toHaveLength(warned);
    },
  );

  it("--inspect in NODE_OPTIONS: the port is the app's, gsup holds none", async () => {
    const port = await freePort();
    const script = 'console.log("inspector:", require("node:inspector").url() ?? "none")';
    const run = gsup(['--', 'node', '-e', script], { env: { NODE_OPTIONS: `--inspect=127.0.0.1:${port}` } });
    const exit = await run.finished(10_000);
    expect(exit.code, run.transcript()).toBe(0);
    expect(
      run.stdout.find((line) => line.startsWith('inspector:')),
      run.transcript(),
    ).toMatch(new RegExp(`^inspector: ws://127\\.0\\.0\\.1:${port}/`));
  });

  it('without koffi (GSUP_FFI=0) gsup cannot start again apart: it says so once, and still forwards SIGTERM once', async () => {
    const run = gsup(['--', 'node', PRINTER], { env: preloaded({ GSUP_FFI: '0' }) });
    await run.ready();
    expect(
      run.stderr.filter((line) => /NODE_OPTIONS is gsup's too \(GSUP_FFI=0\)/.test(line)),
      run.transcript(),
    ).toHaveLength(1);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
  });
});

describe('what a child a preload started in gsup’s first image starts, and leaves to gsup (the subreaper)', () => {
  // The preload's launcher starts a helper (exits 7 after 10 s), then exits 1.5 s later: the helper is reparented to
  // gsup, a subreaper by then even on a loaded machine, and the command (4 s) outlives the launcher.
  it.each([
    { when: 'at once (before gsup’s first spawn)', after: '0' },
    { when: 'a second later (after gsup’s first spawn; no mark of its runs)', after: '1000' },
  ])(
    'started $when: not the tree’s either (never waited for, its status not gsup’s)',
    async ({ after }) => {
      const env = preloaded({ PRELOAD_CHILD_MS: '10000', PRELOAD_GRANDCHILD_AFTER_MS: after });
      const run = gsup(['-v', '--', 'sh', '-c', 'sleep 4; exit 0'], { env });
      const helper = await run.ready('preload-grandchild');
      const started = Date.now();
      const exit = await run.finished();
      // Before: gsup adopted the helper, waited for it (10 s) and exited with its status, 7.
      expect(exit.code, run.transcript()).toBe(0);
      // Well before the helper's end (10 s after its start): a bound on behaviour, generous for a loaded machine.
      expect(Date.now() - started).toBeLessThan(8500);
      expect(run.count(/^signal: /), run.transcript()).toBe(0);
      const said = run.stderr.join('\n');
      expect(said).toMatch(new RegExp(`pid ${helper} \\(.*\\) is not the tree's`));
      expect(said).not.toMatch(/waiting for/);
      expect(isAlive(helper)).toBe(true); // not gsup's to stop: it outlives gsup, away from PID 1
      process.kill(helper, 'SIGKILL');
      await waitFor(() => !isAlive(helper), 'the helper to end');
    },
    30_000,
  );
});
