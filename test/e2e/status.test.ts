import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/net.js';
import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup } from '../helpers/gsup.js';
import { waitFor } from '../helpers/proc.js';

// The orchestrator's view, over real HTTP: /livez, /readyz (drains first), /metrics, and --grace.

/** One request: its status and body (HEAD: no body). */
type Answer = { status: number; body: string; type: string };
function get(port: number, path: string, method = 'GET', host = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body, type: String(response.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    req.setTimeout(2000, () => req.destroy(new Error(`no answer for ${path}`)));
    req.end();
  });
}

/** Polls until `path` answers with `status`; returns the body. */
async function until(port: number, path: string, status: number, timeoutMs = 10_000): Promise<string> {
  let last = { status: 0, body: '' };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    last = await get(port, path).catch(() => ({ status: 0, body: '', type: '' }));
    if (last.status === status) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${path} still answers ${last.status} ${last.body.trim()}, not ${status}`);
}

const promtool = (() => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!promtool)
  console.log(
    'promtool check skipped: promtool (Debian package prometheus) is not installed; .ci/run installs it as root',
  );

describe('--status-port', () => {
  it('/readyz: 503 starting before the first passing check, 200 after; /livez 200; 404 and 405', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
    const ok = join(dir, 'ok');
    try {
      const run = gsup([
        '--status-port',
        String(port),
        '--status-host',
        '127.0.0.1',
        '--health-cmd',
        `test -e ${ok}`,
        '--health-interval',
        '100ms',
        '--health-start-period',
        '30s',
        '--',
        'node',
        PRINTER,
      ]);
      await run.ready();
      expect(await get(port, '/readyz')).toMatchObject({ status: 503, body: 'starting\n' });
      expect(await get(port, '/livez')).toMatchObject({ status: 200, body: 'ok\n' });
      writeFileSync(ok, '');
      await until(port, '/readyz', 200);
      expect((await get(port, '/readyz', 'HEAD')).status).toBe(200);
      expect((await get(port, '/nope')).status).toBe(404);
      expect((await get(port, '/readyz', 'POST')).status).toBe(405);
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the default schedule: an app healthy at once is ready within about a second of its start, not one interval (30 s)', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${appPort}/health`;
    const status = ['--status-port', String(port), '--status-host', '127.0.0.1'];
    const run = gsup([...status, '--health-url', url, '--', 'node', fixture('health-app.js')], {
      env: { PORT: String(appPort) },
    });
    await run.ready('health-app');
    const up = performance.now();
    await until(port, '/readyz', 200, 5000);
    expect(performance.now() - up).toBeLessThan(3000);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });

  it('one failed check after a pass: 503 unhealthy at once (the stop still waits for the retries), 200 at the next pass', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
    const broken = join(dir, 'broken');
    try {
      const probe = `test ! -e ${broken}`;
      const checks = ['--health-cmd', probe, '--health-interval', '200ms', '--health-retries', '100'];
      const run = gsup(['--status-port', String(port), '--status-host', '127.0.0.1', ...checks, '--', 'node', PRINTER]);
      await run.ready();
      await until(port, '/readyz', 200);
      writeFileSync(broken, '');
      expect(await until(port, '/readyz', 503)).toBe('unhealthy\n');
      expect(run.stderr.join('\n')).toMatch(/health check failed \(1 of 100\): exit 1; not ready until a check passes/);
      rmSync(broken);
      await until(port, '/readyz', 200);
      expect(run.count(/^signal: /)).toBe(0); // never stopped
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('/readyz turns 503 within 100 ms of SIGTERM, while the app (--stop-delay 2s) has not received it yet', async () => {
    const port = await freePort();
    const run = gsup([
      '--status-port',
      String(port),
      '--status-host',
      '127.0.0.1',
      '--stop-delay',
      '2s',
      '--',
      'node',
      PRINTER,
    ]);
    await run.ready();
    await until(port, '/readyz', 200);
    run.signal('SIGTERM');
    const sent = performance.now();
    const body = await until(port, '/readyz', 503, 1000);
    const took = performance.now() - sent;
    expect(body).toBe('stopping\n');
    expect(took).toBeLessThan(100);
    expect(run.count(/^signal: SIGTERM /)).toBe(0); // still serving: the balancer drains first
    expect((await get(port, '/livez')).status).toBe(200);
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
  });

  it('503 restarting while a restart waits, 200 once the new run is healthy; /metrics counts two restarts and passes promtool', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
    try {
      // Each run: healthy at once, exits 1 after 1 s; restarts after 1 s.
      const script = `echo "ready (pid: $$, run)"; sleep 1; exit 1`;
      const run = gsup([
        '--status-port',
        String(port),
        '--status-host',
        '127.0.0.1',
        '--restart',
        'on-failure',
        '--restart-delay',
        '1s',
        '--health-cmd',
        'true',
        '--health-interval',
        '100ms',
        '--',
        'sh',
        '-c',
        script,
      ]);
      await run.ready('run');
      await until(port, '/readyz', 200);
      expect(await until(port, '/readyz', 503)).toBe('restarting\n');
      await until(port, '/readyz', 200); // the second run, healthy
      await waitFor(() => run.count(/^ready \(pid: \d+, run\)/) >= 3, 'a third run', 10_000);
      await until(port, '/readyz', 200);
      const metrics = await get(port, '/metrics');
      expect(metrics.type).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(metrics.body).toMatch(/^gsup_restarts_total 2$/m);
      expect(metrics.body).toMatch(/^gsup_command_up 1$/m);
      expect(metrics.body).toMatch(/^gsup_ready 1$/m);
      expect(metrics.body).toMatch(/^gsup_last_exit_code 1$/m);
      expect(
        Number(/^gsup_health_checks_total\{result="pass"\} (\d+)$/m.exec(metrics.body)?.[1]),
      ).toBeGreaterThanOrEqual(3);
      for (const name of [
        'gsup_restarts_total',
        'gsup_command_up',
        'gsup_ready',
        'gsup_health_checks_total',
        'gsup_last_exit_code',
        'gsup_tree_processes',
        'gsup_signals_forwarded_total',
        'gsup_stop_duration_seconds',
      ]) {
        expect(metrics.body).toContain(`# HELP ${name} `);
        expect(metrics.body).toContain(`# TYPE ${name} `);
      }
      if (promtool) {
        const file = join(dir, 'metrics.txt');
        writeFileSync(file, metrics.body);
        // promtool reads the exposition on stdin; lint problems go to stderr with a non-zero status.
        execFileSync('sh', ['-c', `promtool check metrics < ${file}`], { stdio: ['ignore', 'pipe', 'pipe'] });
      }
      run.signal('SIGTERM');
      await run.finished();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('no --status-host: IPv6 and IPv4 alike (`::`, dual-stack)', async () => {
    const port = await freePort();
    const run = gsup(['--status-port', String(port), '--', 'node', PRINTER]);
    await run.ready();
    expect(await get(port, '/livez', 'GET', '127.0.0.1')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get(port, '/livez', 'GET', '::1')).toMatchObject({ status: 200, body: 'ok\n' });
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });

  it('/metrics: gsup_tree_processes counts the running tree (a look for the scrape), not 0 until a signal', async () => {
    const port = await freePort();
    const script = 'echo started; sleep 300 & sleep 300 & wait';
    const run = gsup(['--status-port', String(port), '--status-host', '127.0.0.1', '--', 'sh', '-c', script]);
    await run.waitForLine(/^started$/);
    // Each scrape looks at the tree: the first one that comes after the sleeps started counts them.
    let counted = NaN;
    for (const deadline = Date.now() + 3000; counted !== 3 && Date.now() < deadline;) {
      counted = Number(/^gsup_tree_processes (\d+)$/m.exec((await get(port, '/metrics')).body)?.[1]);
    }
    expect(counted).toBe(3); // sh and its two sleeps
    run.signal('SIGTERM');
    await run.finished();
  });

  it('a port that cannot be bound: one line naming it, 125, the command never started', async () => {
    const port = await freePort();
    const holder = createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => holder.once('listening', resolve));
    try {
      const run = gsup(['--status-port', String(port), '--status-host', '127.0.0.1', '--', 'node', PRINTER]);
      expect((await run.finished()).code).toBe(125);
      expect(run.stderr).toEqual([
        `gsup: cannot serve the status endpoint on 127.0.0.1:${port} (--status-port): EADDRINUSE`,
      ]);
      expect(run.stdout).toEqual([]); // the printer never said ready
    } finally {
      holder.close();
    }
  });
});

describe('--grace', () => {
  it('--grace 4s --stop-delay 1s, an app that ignores SIGTERM: SIGKILLed 3–4 s after the SIGTERM', async () => {
    const run = gsup(['-v', '--grace', '4s', '--stop-delay', '1s', '--', 'node', PRINTER, '--ignore-stop']);
    await run.ready();
    expect(run.stderr.join('\n')).toContain('grace 4.00s: stop delay 1.00s, then the kill timeout 2.00s');
    const sent = performance.now();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(137);
    const took = performance.now() - sent;
    expect(took).toBeGreaterThanOrEqual(3000);
    expect(took).toBeLessThan(4000);
  });

  it('--grace 2s -t 5s is refused: 125, saying by how much', async () => {
    const run = gsup(['--grace', '2s', '-t', '5s', '--', 'true']);
    expect((await run.finished()).code).toBe(125);
    expect(run.stderr).toEqual([
      'gsup: --kill-timeout 5.00s + --stop-delay 0ms is over --grace 2.00s by 3.00s: the orchestrator would SIGKILL first',
    ]);
  });
});

describe('--health-start-interval', () => {
  it('200ms with a failing probe and a 3 s start period: a probe about every 200 ms during those 3 s, gsup still running', async () => {
    const run = gsup([
      '-v',
      '--health-cmd',
      'false',
      '--health-start-interval',
      '200ms',
      '--health-interval',
      '30s',
      '--health-start-period',
      '3s',
      '--',
      'node',
      PRINTER,
    ]);
    await run.ready();
    const started = performance.now();
    await waitFor(
      () => run.stderr.filter((line) => line.includes('health check failed (in the start period')).length >= 8,
      'eight probes in the start period',
      3000,
    );
    expect(performance.now() - started).toBeLessThan(3000);
    expect(run.exit).toBeUndefined();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });
});
