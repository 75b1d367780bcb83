import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRINTER, fixture, gsup, tempDir, type Run } from '../helpers/gsup.js';
import { request } from '../helpers/listen.js';
import { freePort, status } from '../helpers/net.js';

// A run gsup cannot prepare or spawn (issue 35, part 3), by fault injection on real processes: gsup's own
// open-file limit lowered under it (prlimit), or the command made non-executable between runs. A reload's is a
// failed reload (the serving run untouched, counted), a restart's a failed start under the restart policy; never
// an internal error that takes the tree down.

const APP = fixture('reload-app.js');

/** gsup's stderr line that matches, once there (20 s at most). */
const said = (run: Run, pattern: RegExp) => run.waitForLine(pattern, { stream: 'stderr', timeoutMs: 20_000 });

/**
 * gsup's soft open-file limit set to its lowest free fd number: no new fd can be had at all (a socketpair, a pipe,
 * a notify socket, a spawn's pipes), whatever gsup holds. The hard limit is left alone, so that `raise()` can undo
 * it without CAP_SYS_RESOURCE.
 */
function starve(pid: number): { raise: () => void } {
  const used = new Set(readdirSync(`/proc/${pid}/fd`).map(Number));
  let free = 0;
  while (used.has(free)) free++;
  const limits = (soft: string) => execFileSync('prlimit', ['--pid', `${pid}`, `--nofile=${soft}:`]);
  const soft = execFileSync('prlimit', ['--pid', `${pid}`, '--nofile', '--noheadings', '--output', 'SOFT'])
    .toString()
    .trim();
  limits(`${free}`);
  return { raise: () => limits(soft) };
}

describe('a run gsup cannot prepare or spawn (its open-file limit reached, its command not executable)', () => {
  it("a reload with no fd left (the run's socketpair fails: EMFILE): a failed reload, one line; the serving run serves on, gsup runs on", async () => {
    const [port, statusPort] = [await freePort(), await freePort()];
    const args = ['--listen', `127.0.0.1:${port}`, '--reload-signal', 'HUP', '--status-port', `${statusPort}`];
    const run = gsup([...args, '--', 'node', APP, '--port', `${port}`]);
    await run.ready('reload-app');
    expect(await request(port)).toMatchObject({ outcome: 'ok' });
    const starved = starve(run.pid);
    try {
      run.signal('SIGHUP');
      await said(run, /run 2 could not be started \(.*EMFILE.*\): the reload failed, run 1 keeps serving$/);
    } finally {
      starved.raise();
    }
    const ranOnce = run.stdout.filter((line) => line.startsWith('ready (pid:'));
    expect(ranOnce).toHaveLength(1);
    expect(await request(port)).toMatchObject({ outcome: 'ok' });
    expect((await status(statusPort, '/metrics')).body).toContain('gsup_reloads_total{result="failed"} 1');
    expect(run.stderr.filter((line) => /internal error|could not be started/.test(line))).toHaveLength(1);
    // With fds again, the next reload works.
    run.signal('SIGHUP');
    await run.waitForLine(/^listening .* run=3 /);
    await said(run, /run 1 retired in/);
    expect(await request(port)).toMatchObject({ outcome: 'ok' });
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it("a reload under --wait-ready with no fd left (the run's NOTIFY_SOCKET cannot be had): a failed reload; the next works", async () => {
    const statusPort = await freePort();
    const args = ['--wait-ready', '--reload-signal', 'HUP', '--status-port', `${statusPort}`];
    const run = gsup([...args, '--', 'node', APP, '--worker', '--how', 'notify']);
    await run.waitForLine(/^said ready .* run=1 /);
    const starved = starve(run.pid);
    try {
      run.signal('SIGHUP');
      await said(run, /run 2 could not be started \(no NOTIFY_SOCKET for run 2: .*\): the reload failed, run 1 keeps/);
    } finally {
      starved.raise();
    }
    expect((await status(statusPort, '/metrics')).body).toContain('gsup_reloads_total{result="failed"} 1');
    run.signal('SIGHUP');
    await said(run, /run 1 retired in/);
    await run.waitForLine(/^said ready .* run=3 /);
    expect(run.stderr.filter((line) => line.includes('internal error'))).toEqual([]);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('a restart with no fd left: a failed start under the restart policy (back-off, counted); the next one runs', async () => {
    const [port, statusPort] = [await freePort(), await freePort()];
    const args = ['--listen', `127.0.0.1:${port}`, '--restart', 'on-failure', '--restart-delay', '1s'];
    const app = ['node', APP, '--port', `${port}`, '--crash-after', '1:300'];
    const run = gsup([...args, '--status-port', `${statusPort}`, '--', ...app]);
    // Run 1 crashes once it serves; its restart, a second later, comes with no fd left.
    await said(run, /command exited with code 1 \(restart 1 of 10\): restarting in 1\.00s$/);
    const starved = starve(run.pid);
    try {
      await said(run, /command could not be started \(.*EMFILE.*\) \(restart 2 of 10\): restarting in 2\.00s$/);
    } finally {
      starved.raise();
    }
    await run.waitForLine(/^listening .* run=3 /);
    expect(await request(port)).toMatchObject({ outcome: 'ok' });
    expect((await status(statusPort, '/metrics')).body).toContain('gsup_restarts_total 2');
    expect(run.stderr.filter((line) => line.includes('internal error'))).toEqual([]);
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
  });

  it('a restart whose command was made non-executable: a failed start (EACCES) under the policy, not exit 126', async () => {
    const dir = tempDir();
    const command = join(dir.path, 'app.sh');
    // Run 1 takes its own execute bit away and crashes; once it is given back, the run after serves.
    const script = `#!/bin/sh\nif [ -e "$0.ran" ]; then exec node ${PRINTER}; fi\ntouch "$0.ran"; chmod -x "$0"; exit 1\n`;
    writeFileSync(command, script, { mode: 0o755 });
    const run = gsup(['--restart', 'on-failure', '--restart-delay', '1s', '--', command]);
    await said(run, /command could not be started \(EACCES\) \(restart 2 of 10\): restarting in 2\.00s$/);
    chmodSync(command, 0o755);
    await run.ready();
    run.signal('SIGTERM');
    expect(await run.finished(), run.transcript()).toEqual({ code: 0, signal: null });
    expect(run.stderr.filter((line) => line.includes('internal error'))).toEqual([]);
  });

  it('restarts given up on a command that is gone (ENOENT): one line, gsup exits 127 as for a first start', async () => {
    const dir = tempDir();
    const command = join(dir.path, 'app.sh');
    writeFileSync(command, '#!/bin/sh\nrm "$0"; exit 1\n', { mode: 0o755 });
    const run = gsup(['--restart', 'on-failure', '--max-restarts', '1', '--restart-delay', '100ms', '--', command]);
    expect(await run.finished(), run.transcript()).toEqual({ code: 127, signal: null });
    expect(run.stderr).toEqual([
      '[gsup] command exited with code 1 (restart 1 of 1): restarting in 100ms',
      '[gsup] run 2 could not be started (ENOENT); giving up after 1 restart(s) in a row',
      `gsup: ${command}: command not found`,
    ]);
  });
});
