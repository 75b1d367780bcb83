import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixture, gsup, gsupAsPid1, hostPidOfPid1, Run, tempDir, unshareWorks } from '../helpers/gsup.js';
import { gsupLine, inPty, ptySkipReason } from '../helpers/pty.js';
import { allProcs, waitFor } from '../helpers/proc.js';
import { keepAliveLoad, load, request } from '../helpers/listen.js';
import { freePort, status } from '../helpers/net.js';
import { copyPackage, withPrivateRun } from '../helpers/package-copy.js';

// Reloads (--reload-signal) with real processes: the next run starts beside the serving one on the socket gsup
// holds, and the old run is retired once the next listens (or says ready). The fixture reads its run from gsup's
// mark and prints what it got, and when (a monotonic clock every process shares).

const APP = fixture('reload-app.js');

type What =
  'signal: SIGTERM' | 'signal: SIGINT' | 'signal: SIGUSR1' | 'listening' | 'listening2' | 'said ready' | 'ready';
/** The lines run R's fixture printed that begin with `what`. */
const linesOf = (run: Run, what: What, of: number) =>
  run.stdout.filter((line) => line.startsWith(`${what} `) && new RegExp(` run=${of}( |$)`).test(line));
const timeOf = (line: string | undefined) => BigInt(/ t=(\d+)/.exec(line ?? '')?.[1] ?? '0');
const pidOf = (run: Run, of: number) => Number(/pid: (\d+)/.exec(linesOf(run, 'ready', of)[0] ?? '')?.[1]);

/** /readyz polled every 10 ms until `stop` says so: every answer's status code, counted. */
async function pollReady(port: number, stop: () => boolean): Promise<Map<number, number>> {
  const codes = new Map<number, number>();
  while (!stop()) {
    const { code } = await status(port, '/readyz');
    codes.set(code, (codes.get(code) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return codes;
}

/** `promtool check metrics` finds nothing to say of this text, where Debian's prometheus is installed. */
function promtoolClean(text: string): void {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
  } catch {
    console.log('promtool not installed: /metrics not checked by it');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gsup-metrics-'));
  try {
    writeFileSync(join(dir, 'metrics'), text);
    execFileSync('sh', ['-c', `promtool check metrics < ${join(dir, 'metrics')}`], { stdio: 'pipe' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** gsup's own pid, running as PID 1 under unshare. */
async function pid1(run: Run): Promise<number> {
  let pid: number | undefined;
  await waitFor(() => (pid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
  return pid!;
}

/** gsup's stderr line that matches, once there (20 s at most). */
const said = (run: Run, pattern: RegExp) => run.waitForLine(pattern, { stream: 'stderr', timeoutMs: 20_000 });

describe('--reload-signal: a new run beside the serving one, on the socket gsup holds', () => {
  it('three reloads under load (one-connection and keep-alive clients): 0 refused, 0 reset, 0 lost; each old run SIGTERMed once, after its successor listened', async () => {
    const [port, statusPort] = [await freePort(), await freePort()];
    const args = ['-v', '--listen', `127.0.0.1:${port}`, '--reload-signal', 'HUP', '--status-port', `${statusPort}`];
    const run = gsup([...args, '--', 'node', APP, '--port', `${port}`, '--delay', '20']);
    await run.ready('reload-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    let over = false;
    const loads = Promise.all([
      load(port, 10, 60_000, () => over),
      keepAliveLoad(port, 10, 60_000, () => over),
      pollReady(statusPort, () => over),
    ]);
    for (const old of [1, 2, 3]) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      run.signal('SIGHUP');
      await said(run, new RegExp(`run ${old} retired in`));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    over = true;
    const [single, kept, readyz] = await loads;
    console.log(`3 reloads under load: one-connection ${JSON.stringify(single)}, keep-alive ${JSON.stringify(kept)}`);
    expect(single).toMatchObject({ refused: 0, reset: 0, timeout: 0 });
    expect(kept).toMatchObject({ refused: 0, reset: 0, timeout: 0, retried: 0 });
    expect(single.ok).toBeGreaterThan(50);
    expect(kept.ok).toBeGreaterThan(50);
    // /readyz answered for the serving run: 200 throughout.
    expect([...readyz.keys()]).toEqual([200]);
    for (const old of [1, 2, 3]) {
      const term = linesOf(run, 'signal: SIGTERM', old);
      expect(term).toHaveLength(1);
      // Its successor called listen() (which the preload took over and reported) before it got SIGTERM.
      expect(timeOf(term[0])).toBeGreaterThan(timeOf(linesOf(run, 'listening', old + 1)[0]));
    }
    expect(linesOf(run, 'signal: SIGTERM', 4)).toEqual([]);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 4)}\n` });
    const metrics = (await status(statusPort, '/metrics')).body;
    expect(metrics).toContain('gsup_reloads_total{result="ok"} 3');
    expect(metrics).toContain('gsup_restarts_total 0');
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
    expect(linesOf(run, 'signal: SIGTERM', 4)).toHaveLength(1);
  });

  it('a stop signal while the old run drains: the first reaches the new run alone, the second both, once each', async () => {
    const port = await freePort();
    const args = ['-v', '--listen', `127.0.0.1:${port}`, '--reload-signal', 'USR2', '--'];
    // Both runs drain for 3 s after their SIGTERM.
    const run = gsup([...args, 'node', APP, '--port', `${port}`, '--linger-run', '1:3000', '--linger-run', '2:3000']);
    await run.ready('reload-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    run.signal('SIGUSR2');
    await run.waitForLine(/^signal: SIGTERM .* run=1 /);
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM .* run=2 /);
    await said(run, /SIGTERM → /); // the round that sent it is said: a look later nothing more goes
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(linesOf(run, 'signal: SIGTERM', 1)).toHaveLength(1);
    expect(linesOf(run, 'signal: SIGTERM', 2)).toHaveLength(1);
    run.signal('SIGINT');
    await run.waitForLine(/^signal: SIGINT .* run=1 /);
    await run.waitForLine(/^signal: SIGINT .* run=2 /);
    const exit = await run.finished();
    expect(linesOf(run, 'signal: SIGTERM', 1)).toHaveLength(1);
    expect(linesOf(run, 'signal: SIGINT', 1)).toHaveLength(1);
    expect(linesOf(run, 'signal: SIGINT', 2)).toHaveLength(1);
    // gsup's status is the current run's (run 2 exits 0 on its signals).
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('a new run that crashes, or never listens: the old run keeps serving, 0 refused; the reload counted failed', async () => {
    const [port, statusPort] = [await freePort(), await freePort()];
    const args = ['-v', '--listen', `127.0.0.1:${port}`, '--reload-signal', 'HUP', '--ready-timeout', '1s'];
    const app = ['node', APP, '--port', `${port}`, '--crash-run', '2', '--never-run', '3'];
    const run = gsup([...args, '--status-port', `${statusPort}`, '--', ...app]);
    await run.ready('reload-app');
    await said(run, /run 1: pid \d+ took the held socket/);
    let over = false;
    const loading = load(port, 10, 60_000, () => over);
    run.signal('SIGHUP');
    await said(run, /run 2 exited \(code 3\) before it was ready: the reload failed, run 1 keeps serving/);
    run.signal('SIGHUP');
    await said(run, /run 3 did not listen on a held socket within 1\.00s: the reload failed, run 1 keeps serving/);
    await said(run, /run 3 \(the failed reload\) stopped in/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    over = true;
    const counts = await loading;
    expect(counts).toMatchObject({ refused: 0, reset: 0, timeout: 0 });
    expect(counts.ok).toBeGreaterThan(20);
    // Run 1 served all along, untouched; run 3 got SIGTERM once.
    expect(linesOf(run, 'signal: SIGTERM', 1)).toEqual([]);
    expect(linesOf(run, 'signal: SIGTERM', 3)).toHaveLength(1);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 1)}\n` });
    expect(await status(statusPort, '/readyz')).toEqual({ code: 200, body: 'ready\n' });
    const metrics = (await status(statusPort, '/metrics')).body;
    expect(metrics).toContain('gsup_reloads_total{result="failed"} 2');
    expect(metrics).toContain('gsup_restarts_total 0');
    // gsup_last_exit_code speaks of the current run only: run 2's exit 3 is not it.
    expect(metrics).toContain('# TYPE gsup_last_exit_code gauge\n# HELP');
    promtoolClean(metrics);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });
});

describe('--reload-signal: a retiring run SIGKILLed while the new run crashes (issue 35)', () => {
  // Run 1 ignores its SIGTERM for a minute; run 2 crashes 300 ms after its word, while run 1 retires: the stop of
  // the whole tree that follows waits for run 1, which its own kill timeout SIGKILLs.
  const app = ['node', APP, '--worker', '--linger-run', '1:60000', '--crash-after', '2:300'];

  it('the summary printed last and the termination log name the kill; the reload is counted killed', async () => {
    const log = join(tempDir().path, 'termination-log');
    const run = gsup([
      '-v',
      '--wait-ready',
      '--reload-signal',
      'HUP',
      '-t',
      '2s',
      '--termination-log',
      log,
      '--',
      ...app,
    ]);
    await run.waitForLine(/^said ready .* run=1 /);
    const old = pidOf(run, 1);
    run.signal('SIGHUP');
    await run.waitForLine(/^signal: SIGTERM .* run=1 /);
    const exit = await run.finished(20_000);
    expect(exit, run.transcript()).toEqual({ code: 1, signal: null }); // run 2's crash: the current run's status
    const last = run.stderr.filter((line) => / in \S+( \(.*\))?: \d+ exited by themselves/.test(line)).at(-1);
    // Before: "stopped in 1.69s: 1 exited by themselves, 0 killed" (run 1's SIGKILL was its retiring's, not the stop's).
    expect(last, run.transcript()).toMatch(new RegExp(`: 0 exited by themselves, 1 killed: ${old} \\(node `));
    expect(readFileSync(log, 'latin1')).toMatch(new RegExp(`0 exited by themselves, 1 killed: ${old} \\(node `));
    expect(run.count(/^signal: SIGTERM .* run=1 /)).toBe(1);
  });

  it('under --restart always, the stop before the restart names it too, and gsup_reloads_total counts it killed', async () => {
    const statusPort = await freePort();
    const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '-t', '2s', '--restart', 'always'];
    const run = gsup([...args, '--restart-delay', '10ms', '--status-port', `${statusPort}`, '--', ...app]);
    await run.waitForLine(/^said ready .* run=1 /);
    const old = pidOf(run, 1);
    run.signal('SIGHUP');
    await run.waitForLine(/^said ready .* run=3 /);
    const stopped = run.stderr.find((line) => /stopped in \S+: /.test(line));
    expect(stopped, run.transcript()).toMatch(new RegExp(`: 0 exited by themselves, 1 killed: ${old} \\(node `));
    await said(run, /run 1 retired in \S+ \(its command died of signal SIGKILL\): 0 exited by themselves, 1 killed/);
    const metrics = (await status(statusPort, '/metrics')).body;
    expect(metrics).toContain('gsup_reloads_total{result="killed"} 1');
    expect(metrics).toContain('gsup_reloads_total{result="ok"} 0');
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });
});

describe('--reload-signal: when the next run has listened (the review of issue 32)', () => {
  it('a next run that says nothing (--no-listen-preload, LISTEN_FDS) is seen listening by the kernel, sampled steadily', async () => {
    const port = await freePort();
    const args = ['-v', '--listen', `127.0.0.1:${port}`, '--no-listen-preload', '--reload-signal', 'HUP'];
    // Run 2 listens 4 s after its start: sampled every 250 ms it is seen at once, where samples that back off
    // (250 ms, then twice as long each time) would look next at 7.75 s.
    const run = gsup([...args, '--', 'node', APP, '--fds', '--slow-run', '2:4000']);
    await run.ready('reload-app');
    await said(run, /run 1: pid \d+ took the held socket \S+ \(seen by the kernel\)/);
    let over = false;
    const loading = load(port, 5, 60_000, () => over);
    run.signal('SIGHUP');
    await said(run, /run 2 is ready \(the kernel saw it listen on the held socket \S+\)/);
    await said(run, /run 1 retired in/);
    over = true;
    const counts = await loading;
    expect(counts).toMatchObject({ refused: 0, reset: 0, timeout: 0 });
    expect(counts.ok).toBeGreaterThan(10);
    const term = linesOf(run, 'signal: SIGTERM', 1);
    expect(term).toHaveLength(1);
    const listened = timeOf(linesOf(run, 'listening', 2)[0]);
    expect(timeOf(term[0])).toBeGreaterThan(listened);
    // Seen within 2 s of its listen (a sample every 250 ms; under load, some more), not at 7.75 s.
    expect(Number(timeOf(term[0]) - listened) / 1e6).toBeLessThan(2000);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 2)}\n` });
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('a server whose blocking accept(2) runs in a thread other than the main one (python3) is seen taking the socket: its reload works, no false warning', async () => {
    const port = await freePort();
    const args = ['-v', '--listen', `127.0.0.1:${port}`, '--no-listen-preload', '--reload-signal', 'HUP'];
    const run = gsup([...args, '--ready-timeout', '5s', '--', 'python3', fixture('listen-app.py'), 'threaded']);
    const first = await run.ready('listen-app.py');
    await said(run, new RegExp(`run 1: pid ${first} took the held socket \\S+ \\(seen by the kernel\\)`));
    run.signal('SIGHUP');
    await said(run, /run 2 is ready \(the kernel saw it listen on the held socket \S+\)/);
    await said(run, /run 1 retired in/);
    const second = Number(/pid: (\d+)/.exec(run.stdout.filter((line) => line.startsWith('ready (pid:'))[1])?.[1]);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${second} fd 3\n` });
    expect(run.stderr.filter((line) => /has taken|the reload failed/.test(line))).toEqual([]);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('two held sockets: the next run is ready once it listens on both (the old run took both), not at its first', async () => {
    const [web, admin] = [await freePort(), await freePort()];
    const held = ['--listen', `web=127.0.0.1:${web}`, '--listen', `admin=127.0.0.1:${admin}`];
    const app = ['node', APP, '--port', `${web}`, '--port2', `${admin}`, '--second-run', '2:1500'];
    const run = gsup(['-v', ...held, '--reload-signal', 'HUP', '--', ...app]);
    await run.ready('reload-app');
    await said(run, /run 1: pid \d+ took the held socket admin/);
    await said(run, /run 1: pid \d+ took the held socket web/);
    run.signal('SIGHUP');
    await said(run, /run 2 is ready \(its first listen on every held socket run 1 took \(web, admin\)\)/);
    await said(run, /run 1 retired in/);
    const term = linesOf(run, 'signal: SIGTERM', 1);
    expect(term).toHaveLength(1);
    // Run 1 got SIGTERM only after run 2's second listen (1.5 s after its first).
    expect(timeOf(term[0])).toBeGreaterThan(timeOf(linesOf(run, 'listening2', 2)[0]));
    for (const port of [web, admin]) expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 2)}\n` });
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });
});

describe("--reload-signal: the preload's file, named by the serving run", () => {
  it('removed under a serving run (a cleaner, as root): written again at the same path, so its Node children still start', async () => {
    // gsup's package under /tmp (its own file not safe there): root's file under a /run of the test's own.
    const pkg = tempDir();
    const port = await freePort();
    const args = ['-vv', '--listen', `127.0.0.1:${port}`, '--reload-signal', 'HUP', '--ready-timeout', '2s'];
    const [command, argv] = withPrivateRun(copyPackage(pkg.path), [
      ...args,
      '--',
      'node',
      APP,
      '--port',
      `${port}`,
      '--child',
      '--never-run',
      '2',
    ]);
    const run = new Run(command, argv);
    await run.ready('reload-app');
    const path = (await said(run, /listen preload at (\S+)/))[1];
    expect(path).toMatch(/^\/run\/gsup\/listen-preload-\w+\.cjs$/);
    await said(run, /run 1: pid \d+ took the held socket/);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 1)} child=0\n` });
    execFileSync('nsenter', ['-t', String(run.pid), '-m', 'rm', path]);
    // Run 2's spawn checks the file first: written again, where run 1's NODE_OPTIONS names it.
    run.signal('SIGHUP');
    await said(run, new RegExp(`${path} is gone: the listen preload is at ${path} again`));
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 1)} child=0\n` });
    await said(run, /run 2 did not listen on a held socket within 2\.00s: the reload failed, run 1 keeps serving/);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pidOf(run, 1)} child=0\n` });
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });
});

describe('--reload-signal with --wait-ready alone: a queue worker with no port', () => {
  it("reloads on the new run's word (process.send('ready')): the old one gets SIGTERM after it; its status is its own", async () => {
    const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '--'];
    // Run 1 leaves with code 7 when retired: logged as its own, never gsup's.
    const run = gsup([...args, 'node', APP, '--worker', '--delay', '300', '--exit-run', '1:7']);
    await run.waitForLine(/^said ready .* run=1 /);
    run.signal('SIGHUP');
    await said(run, /run 2 is ready \(process\.send\('ready'\)\) \S+ after its start: retiring run 1 with SIGTERM/);
    await said(run, /run 1 retired in \S+ \(its command exited with code 7\)/);
    const term = await run.waitForLine(/^signal: SIGTERM \(pid: \d+\) run=1 t=(\d+)$/);
    expect(linesOf(run, 'said ready', 2)).toHaveLength(1);
    // Run 1 got its SIGTERM after run 2 said its word (a clock every process shares).
    expect(BigInt(term[1])).toBeGreaterThan(timeOf(linesOf(run, 'said ready', 2)[0]));
    expect(linesOf(run, 'signal: SIGTERM', 2)).toEqual([]);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('another signal during a reload reaches both runs, once each (the reload signal reaches neither)', async () => {
    const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '--'];
    const run = gsup([...args, 'node', APP, '--worker', '--slow-run', '2:1500']);
    await run.waitForLine(/^said ready .* run=1 /);
    run.signal('SIGHUP');
    await run.waitForLine(/^ready \(pid: \d+, reload-app\) run=2$/);
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 .* run=1 /);
    await run.waitForLine(/^signal: SIGUSR1 .* run=2 /);
    await said(run, /run 1 retired in/);
    expect(linesOf(run, 'signal: SIGUSR1', 1)).toHaveLength(1);
    expect(linesOf(run, 'signal: SIGUSR1', 2)).toHaveLength(1);
    expect(run.stdout.filter((line) => line.includes('SIGHUP'))).toEqual([]);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('a release whose command is gone (ENOENT): the reload failed, the old run serves on, the next reload works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-release-'));
    try {
      const command = join(dir, 'worker');
      writeFileSync(command, `#!/bin/sh\nexec node ${APP} --worker --how notify\n`, { mode: 0o755 });
      const run = gsup(['-v', '--wait-ready', '--reload-signal', 'HUP', '--', command]);
      await run.waitForLine(/^said ready .* run=1 /);
      rmSync(command);
      run.signal('SIGHUP');
      await said(run, /run 2 could not be started \(ENOENT\): the reload failed, run 1 keeps serving$/);
      writeFileSync(command, `#!/bin/sh\nexec node ${APP} --worker --how notify\n`, { mode: 0o755 });
      run.signal('SIGHUP');
      await said(run, /run 1 retired in/);
      await run.waitForLine(/^said ready .* run=3 /);
      run.signal('SIGTERM');
      expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the old run exits first: the next run is the current one (503 starting until ready), a restart without back-off', async () => {
    const statusPort = await freePort();
    const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '--status-port', `${statusPort}`, '--'];
    const run = gsup([...args, 'node', APP, '--worker', '--slow-run', '2:3000']);
    await run.waitForLine(/^said ready .* run=1 /);
    run.signal('SIGHUP');
    await run.waitForLine(/^ready \(pid: \d+, reload-app\) run=2$/);
    process.kill(pidOf(run, 1), 'SIGKILL'); // run 1 crashes
    await said(run, /run 1 exited \(signal SIGKILL\) before run 2 was ready: run 2 is the current run/);
    expect(await status(statusPort, '/readyz')).toEqual({ code: 503, body: 'starting\n' });
    await run.waitForLine(/^said ready .* run=2 /);
    // Its word is on its way: 200 once gsup heard it.
    const until = Date.now() + 5000;
    while ((await status(statusPort, '/readyz')).code !== 200 && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await status(statusPort, '/readyz')).toEqual({ code: 200, body: 'ready\n' });
    const metrics = (await status(statusPort, '/metrics')).body;
    expect(metrics).toContain('gsup_restarts_total 1\n');
    expect(metrics).toContain('gsup_last_exit_code 137\n'); // run 1 was the current run when it died
    expect(metrics).toMatch(/gsup_reloads_total\{result="ok"\} 0\n.*\n.*failed"\} 0\n/);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('during a restart’s back-off the reload signal starts the next run now', async () => {
    const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '--restart', 'always', '--restart-delay', '20s'];
    const run = gsup([...args, '--', 'node', APP, '--worker']);
    await run.waitForLine(/^said ready .* run=1 /);
    process.kill(pidOf(run, 1), 'SIGKILL');
    await said(run, /restarting in 20\.00s/);
    const asked = Date.now();
    run.signal('SIGHUP');
    await said(run, /SIGHUP received: the restart's back-off cut short, the next run starts now/);
    await run.waitForLine(/^said ready .* run=2 /);
    expect(Date.now() - asked).toBeLessThan(10_000);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it("behind sh -c, on READY=1 at the new run's own NOTIFY_SOCKET; a reload signal during a reload is taken when it ends", async () => {
    const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '--'];
    const run = gsup([...args, 'sh', '-c', `node ${APP} --worker --how notify --delay 300; true`]);
    await run.waitForLine(/^said ready .* run=1 /);
    run.signal('SIGHUP');
    await said(run, /reloading: run 2 starts beside run 1/);
    run.signal('SIGHUP');
    await said(run, /SIGHUP received during a reload: taken when it ends/);
    await said(run, /run 2 is ready \(READY=1 on NOTIFY_SOCKET\)/);
    await said(run, /run 1 retired in/);
    await said(run, /run 3 is ready \(READY=1 on NOTIFY_SOCKET\)/);
    await said(run, /run 2 retired in/);
    // Its python3 that said the word is gone too (a SIGTERM to its group now would end it, and the app with 1).
    await run.waitForLine(/^said ready .* run=3 /);
    // Each run's word came on its own socket: run 3's said nothing for run 2.
    const sockets = run.stdout.filter((line) => line.startsWith('ready ('));
    expect(sockets).toHaveLength(3);
    expect(linesOf(run, 'signal: SIGTERM', 1)).toHaveLength(1);
    expect(linesOf(run, 'signal: SIGTERM', 2)).toHaveLength(1);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });
});

describe('--reload-signal: the old run’s whole tree, and nothing of the new one', () => {
  // Each run leaves a daemon (double-forked, a session of its own): an orphan of gsup no look saw descend, told
  // apart by the mark of its run. As subreaper (its mark read for the reload) and as PID 1 (judged by it).
  const modes = [
    ['as subreaper', false],
    ['as PID 1', true],
  ] as const;
  it.each(modes)(
    '%s: run 1’s daemon gets SIGTERM with run 1, once; run 2’s only at the final stop',
    async (_, asPid1) => {
      if (asPid1 && !unshareWorks) return void console.log('no PID namespace here: the PID 1 case not run');
      const script = `node ${fixture('daemonize.js')} --then exit:0; exec node ${APP} --worker --how notify`;
      const args = ['-v', '--wait-ready', '--reload-signal', 'HUP', '--', 'sh', '-c', script];
      const run = asPid1 ? gsupAsPid1(args) : gsup(args);
      const gsupPid = asPid1 ? await pid1(run) : run.pid;
      const daemon = async (index: number) => {
        await waitFor(
          () => run.stdout.filter((line) => /^ready \(pid: \d+, daemon\)/.test(line)).length > index,
          'a daemon',
        );
        return Number(
          /pid: (\d+)/.exec(run.stdout.filter((line) => /^ready \(pid: \d+, daemon\)/.test(line))[index])![1],
        );
      };
      const first = await daemon(0);
      await run.waitForLine(/^said ready .* run=1 /);
      process.kill(gsupPid, 'SIGHUP');
      const second = await daemon(1);
      await said(run, /run 1 retired in \S+ \(its command exited with code 0\): 2 exited by themselves/);
      const terms = (pid: number) => run.count(new RegExp(`^signal: SIGTERM \\(pid: ${pid}, daemon\\)$`));
      expect([terms(first), terms(second)], run.transcript()).toEqual([1, 0]);
      await run.waitForLine(/^said ready .* run=2 /);
      process.kill(gsupPid, 'SIGTERM');
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect([terms(first), terms(second)]).toEqual([1, 1]);
    },
  );
});

describe('--reload-signal with the terminal handed over (docker run -it)', () => {
  it.skipIf(ptySkipReason)('a reloaded run gets no controlling terminal, said once; the first run has it', async () => {
    const script = `if (exec 5</dev/tty) 2>/dev/null; then echo tty-yes; else echo tty-no; fi; exec node ${APP} --worker --how notify`;
    const args = ['--wait-ready', '--reload-signal', 'USR2', '--', 'sh', '-c', script];
    const run = inPty(`exec ${gsupLine(args)}`);
    await run.waitForLine(/^said ready .* run=1 /);
    const gsupPid = allProcs().find((proc) => proc.ppid === run.pid)!.pid;
    for (const old of [1, 2]) {
      process.kill(gsupPid, 'SIGUSR2');
      await run.waitForLine(new RegExp(`^said ready .* run=${old + 1} `));
      await run.waitForLine(new RegExp(`run ${old} retired in`));
    }
    expect(run.stdout.filter((line) => line.startsWith('tty-'))).toEqual(['tty-yes', 'tty-no', 'tty-no']);
    expect(run.stdout.filter((line) => line.includes('a reloaded run gets no controlling terminal'))).toHaveLength(1);
    process.kill(gsupPid, 'SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });
});

describe('--reload-signal: what it may be', () => {
  const refused: Array<[string[], RegExp]> = [
    [['--reload-signal', 'HUP'], /--reload-signal "HUP" needs --listen or --wait-ready/],
    [
      ['--wait-ready', '--reload-signal', 'TERM'],
      /invalid signal "TERM" for --reload-signal: SIGTERM is a stop signal/,
    ],
    [['--wait-ready', '--reload-signal', 'INT'], /SIGINT is a stop signal/],
    [['--wait-ready', '--reload-signal', 'TSTP'], /SIGTSTP is job control/],
    [['--wait-ready', '--reload-signal', 'KILL'], /gsup cannot take SIGKILL as a request/],
    [['--wait-ready', '--reload-signal', 'CHLD'], /gsup cannot take SIGCHLD as a request/],
    [['--wait-ready', '-p', 'USR1', '--reload-signal', 'USR1'], /SIGUSR1 is the --pdeathsig signal/],
    [['--wait-ready', '-r', 'HUP:USR1', '--reload-signal', 'HUP'], /a --rewrite rule rewrites SIGHUP/],
    [['--wait-ready', '--reload-signal', 'NOPE'], /invalid signal "NOPE"/],
  ];
  it.each(refused)('%j: exit 125, one line', async (args, message) => {
    const run = gsup([...args, '--', 'node', APP, '--worker']);
    expect(await run.finished()).toEqual({ code: 125, signal: null });
    expect(run.stderr.filter((line) => line !== '')).toEqual([expect.stringMatching(message)]);
    expect(run.stdout).toEqual([]);
  });

  it('GSUP_RELOAD_SIGNAL is read as the flag is', async () => {
    const run = gsup(['--', 'node', APP, '--worker'], { env: { GSUP_RELOAD_SIGNAL: 'TERM', GSUP_WAIT_READY: '1' } });
    expect(await run.finished()).toEqual({ code: 125, signal: null });
    expect(run.stderr[0]).toMatch(/invalid signal "TERM" for GSUP_RELOAD_SIGNAL: SIGTERM is a stop signal/);
  });
});
