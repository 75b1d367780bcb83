import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, gsup, type Run } from '../helpers/gsup.js';
import { freePort } from '../helpers/net.js';

// --wait-ready with real processes: the app's word (process.send('ready'), READY=1 on $NOTIFY_SOCKET) read
// through /readyz before and after, --ready-timeout's failed start, and readiness with health checks.

const READY_APP = fixture('ready-app.js');

const python3 = (() => {
  try {
    execFileSync('python3', ['-c', 'import socket'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!python3) console.log('NOTIFY_SOCKET tests skipped: the app sends READY=1 with python3, which is not installed');

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(2000, () => req.destroy(new Error(`no answer for ${path}`)));
    req.end();
  });
}

/** Polls /readyz until it answers `status`. */
async function readyzUntil(port: number, status: number, timeoutMs = 10_000): Promise<void> {
  let last = { status: 0, body: '' };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    last = await get(port, '/readyz').catch(() => ({ status: 0, body: '' }));
    if (last.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`/readyz still answers ${last.status} ${last.body.trim()}, not ${status}`);
}

const gsupReady = async (port: number) => /^gsup_ready (\d)$/m.exec((await get(port, '/metrics')).body)?.[1];

/** gsup with a status port, -v and --wait-ready. */
async function start(args: string[]): Promise<{ run: Run; port: number }> {
  const port = await freePort();
  const run = gsup(['-v', '--wait-ready', '--status-port', String(port), '--status-host', '127.0.0.1', ...args]);
  return { run, port };
}

describe('--wait-ready', () => {
  it("a direct Node child: 503 starting until process.send('ready'), then 200; -v says after how long", async () => {
    const { run, port } = await start(['--', 'node', READY_APP, '--how', 'ipc', '--delay', '1500']);
    const started = await run.waitForLine(/^ready \(pid: \d+, ready-app\) ipc: (\w+)/);
    expect(started[1]).toBe('yes');
    expect(await get(port, '/readyz')).toEqual({ status: 503, body: 'starting\n' });
    expect(await gsupReady(port)).toBe('0');
    await run.waitForLine(/^said ready/);
    await readyzUntil(port, 200);
    expect(await gsupReady(port)).toBe('1');
    const line = /^\[gsup\] the app said it is ready \(process\.send\('ready'\)\) ([\d.]+)s after its start$/;
    const said = await run.waitForLine(line, { stream: 'stderr' });
    expect(Number(said[1])).toBeGreaterThanOrEqual(1.5);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });

  const notify = 'through sh -c: READY=1 on $NOTIFY_SOCKET (a shell gets no IPC channel); the socket gone at the end';
  it.skipIf(!python3)(notify, async () => {
    const command = `node ${READY_APP} --how notify --delay 1000; echo after`; // not exec: sh stays between
    const { run, port } = await start(['--', 'sh', '-c', command]);
    const started = await run.waitForLine(/^ready \(pid: \d+, ready-app\) ipc: (\w+), notify: (\S+)/);
    expect(started[1]).toBe('no');
    const socket = started[2];
    expect(socket).toMatch(/\/notify$/);
    expect(await get(port, '/readyz')).toEqual({ status: 503, body: 'starting\n' });
    await run.waitForLine(/^said ready/);
    await readyzUntil(port, 200);
    await run.waitForLine(/the app said it is ready \(READY=1 on NOTIFY_SOCKET\)/, { stream: 'stderr' });
    run.signal('SIGTERM');
    await run.finished();
    expect(existsSync(dirname(socket))).toBe(false);
  });

  it('with a health check as well, both must hold: a passing check alone is not ready, the word then is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
    const [healthy, word] = [join(dir, 'healthy'), join(dir, 'word')];
    try {
      writeFileSync(healthy, '');
      const health = ['--health-cmd', `test -e ${healthy}`, '--health-interval', '100ms'];
      const { run, port } = await start([...health, '--', 'node', READY_APP, '--how', 'ipc', '--when', word]);
      await run.waitForLine(/health check passed/, { stream: 'stderr' });
      expect(await get(port, '/readyz')).toEqual({ status: 503, body: 'starting\n' });
      writeFileSync(word, '');
      await run.waitForLine(/^said ready/);
      await readyzUntil(port, 200);
      // And the word alone is not enough either: a failing check makes it not ready again.
      rmSync(healthy);
      await readyzUntil(port, 503);
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('--ready-timeout', () => {
  it('no word in time: a failed start, said in one line, the app stopped, gsup exits 1 (never 0)', async () => {
    const run = gsup(['--wait-ready', '--ready-timeout', '500ms', '--', 'node', READY_APP, '--never']);
    await run.ready('ready-app');
    expect(await run.finished()).toEqual({ code: 1, signal: null });
    expect(run.stderr.filter((line) => /ready-timeout|did not say/.test(line))).toEqual([
      '[gsup] the app did not say it was ready within 500ms (--ready-timeout): a failed start',
    ]);
    expect(run.count(/^signal: SIGTERM/)).toBe(1);
  });

  it('under --restart on-failure: restarted, counted as a failure; ready once a later run says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
    const word = join(dir, 'word');
    try {
      const restart = ['--restart', 'on-failure', '--restart-delay', '100ms', '--ready-timeout', '700ms'];
      const { run, port } = await start([...restart, '--', 'node', READY_APP, '--how', 'ipc', '--when', word]);
      const first = await run.ready('ready-app');
      const restarting = /command did not say it was ready in time \(restart 1 of 10\): restarting in 100ms/;
      await run.waitForLine(restarting, { stream: 'stderr' });
      await run.waitForLine(new RegExp(`^ready \\(pid: (?!${first}\\b)\\d+, ready-app\\)`));
      expect(await get(port, '/readyz')).toEqual({ status: 503, body: 'starting\n' });
      writeFileSync(word, '');
      await readyzUntil(port, 200);
      expect(/^gsup_restarts_total (\d+)$/m.exec((await get(port, '/metrics')).body)?.[1]).toBe('1');
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
