import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthVerdicts, probeAll, type HealthConfig, type ProbeContext } from '../../../src/engine/health/probes.js';
import { currentPlatform } from '../../../src/platform/index.js';
import { linuxPlatform } from '../../../src/platform/linux/platform.js';
import { waitFor } from '../../helpers/proc.js';

const config: HealthConfig = {
  maxAgeMs: 60_000,
  intervalMs: 30_000,
  timeoutMs: 5000,
  retries: 3,
  startIntervalMs: 5000,
  startPeriodMs: 10_000,
};
const ok = { ok: true, detail: 'exit 0' };
const failed = { ok: false, detail: 'exit 1' };

describe('HealthVerdicts (Docker’s rules)', () => {
  it('retries failures in a row make it unhealthy; a success in between resets the count', () => {
    const verdicts = new HealthVerdicts({ ...config, startPeriodMs: 0 });
    verdicts.reset(0);
    expect(verdicts.judge(failed, 30_001)).toEqual({ state: 'starting', counted: true });
    expect(verdicts.judge(failed, 30_002).state).toBe('starting');
    expect(verdicts.judge(ok, 30_003).state).toBe('healthy');
    expect(verdicts.judge(failed, 30_004)).toEqual({ state: 'failing', counted: true });
    expect(verdicts.judge(failed, 30_005).state).toBe('failing');
    expect(verdicts.judge(failed, 30_006).state).toBe('unhealthy');
  });

  it('failing: one failure after a pass (not ready), healthy again at the next pass', () => {
    const verdicts = new HealthVerdicts(config);
    verdicts.reset(0);
    expect(verdicts.judge(ok, 1000).state).toBe('healthy');
    expect(verdicts.judge(failed, 31_000)).toEqual({ state: 'failing', counted: true });
    expect(verdicts.judge(ok, 61_000)).toEqual({ state: 'healthy', counted: false });
    expect(verdicts.failures).toBe(0);
  });

  it('failures in the start period do not count; after it they do', () => {
    const verdicts = new HealthVerdicts({ ...config, startPeriodMs: 40_000 });
    verdicts.reset(1000);
    for (let at = 1000; at < 41_000; at += 5000) {
      expect(verdicts.judge(failed, at)).toEqual({ state: 'starting', counted: false });
    }
    expect(verdicts.judge(failed, 41_000)).toEqual({ state: 'starting', counted: true });
  });

  it('no start period: failures count only from one interval on (when Docker’s first check comes)', () => {
    const verdicts = new HealthVerdicts({ ...config, startPeriodMs: 0 });
    verdicts.reset(0);
    expect(verdicts.judge(failed, 1000)).toEqual({ state: 'starting', counted: false });
    expect(verdicts.judge(failed, 29_999)).toEqual({ state: 'starting', counted: false });
    expect(verdicts.judge(failed, 30_000)).toEqual({ state: 'starting', counted: true });
  });

  it('the schedule: the first check within a second, then the start interval until a pass (or one interval), then the interval', () => {
    const verdicts = new HealthVerdicts({ ...config, startPeriodMs: 0 });
    verdicts.reset(0);
    expect(verdicts.nextIntervalMs(0)).toBe(1000);
    verdicts.judge(failed, 1000);
    expect(verdicts.nextIntervalMs(1000)).toBe(5000);
    verdicts.judge(failed, 31_000);
    expect(verdicts.nextIntervalMs(31_000)).toBe(30_000);
    verdicts.reset(100_000);
    verdicts.judge(ok, 101_000);
    expect(verdicts.nextIntervalMs(101_000)).toBe(30_000);
    // Never later than the interval or the start interval allow.
    const quick = new HealthVerdicts({ ...config, intervalMs: 100, startIntervalMs: 5000 });
    quick.reset(0);
    expect(quick.nextIntervalMs(0)).toBe(100);
    const starting = new HealthVerdicts({ ...config, startIntervalMs: 200 });
    starting.reset(0);
    expect(starting.nextIntervalMs(0)).toBe(200);
  });

  it('a success ends the start period at once', () => {
    const verdicts = new HealthVerdicts({ ...config, retries: 1 });
    verdicts.reset(0);
    verdicts.judge(ok, 100);
    expect(verdicts.judge(failed, 200).state).toBe('unhealthy');
  });

  it('a reload hands over: the start period begins again, the verdict of the run it took over stays', () => {
    const verdicts = new HealthVerdicts({ ...config, retries: 1 });
    verdicts.reset(0);
    verdicts.judge(ok, 100);
    verdicts.handOver(20_000);
    expect(verdicts.state).toBe('healthy'); // /readyz stays 200
    expect(verdicts.nextIntervalMs(20_000)).toBe(1000); // its first check soon
    expect(verdicts.judge(failed, 20_100)).toEqual({ state: 'healthy', counted: false }); // in its start period
    expect(verdicts.judge(failed, 51_000)).toEqual({ state: 'unhealthy', counted: true }); // one interval on
  });

  it('a new run starts the start period again', () => {
    const verdicts = new HealthVerdicts({ ...config, retries: 1 });
    verdicts.reset(0);
    verdicts.judge(ok, 100);
    verdicts.reset(20_000);
    expect(verdicts.judge(failed, 20_100)).toEqual({ state: 'starting', counted: false });
    expect(verdicts.nextIntervalMs(20_100)).toBe(5000);
  });
});

describe('--health-url', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** Answers /<status> with that status (a 3xx with a Location to /elsewhere, which fails): its URL, the paths asked. */
  async function serve(): Promise<{ base: string; asked: string[] }> {
    const asked: string[] = [];
    server = createServer((request, response) => {
      asked.push(request.url ?? '');
      const status = Number((request.url ?? '/').slice(1)) || 500;
      response.writeHead(status, status >= 300 && status < 400 ? { location: '/elsewhere' } : {}).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
  }

  const context: ProbeContext = { platform: currentPlatform(), cwd: '/', env: {}, spawned: () => {}, reaped: () => {} };
  const probe = (url: string) => probeAll({ ...config, url }, context, new AbortController().signal);

  it('200–399 is healthy, as Kubernetes’ httpGet; a redirect is not followed', async () => {
    const { base, asked } = await serve();
    for (const status of [200, 204, 301, 302, 307, 399, 400, 404, 500, 503]) {
      expect(await probe(`${base}/${status}`), String(status)).toEqual({ ok: status < 400, detail: `HTTP ${status}` });
    }
    expect(asked).not.toContain('/elsewhere'); // the 3xx answers' Location was never asked for
  });
});

describe('a probe command that times out (a real sh)', () => {
  it('stays Node’s until Node has reaped it: gsup’s reaper may not take it at the timeout, only after its exit', async () => {
    const events: string[] = [];
    let pid = 0;
    // Both names of the bookkeeping: the test says when it is told the probe is no longer Node's.
    const done = (probe: number) => events.push(`released ${probe === pid}`);
    const context = {
      platform: linuxPlatform,
      cwd: '/',
      env: process.env,
      spawned: (probe: number) => ((pid = probe), events.push('spawned')),
      reaped: done,
      ended: done,
    } as ProbeContext;
    const result = await probeAll(
      { ...config, cmd: 'sleep 30', file: undefined, timeoutMs: 200 },
      context,
      new AbortController().signal,
    );
    // The result comes in the timer's callback, where the SIGKILL was sent: sh is still a child of Node's, unreaped.
    expect(result).toEqual({ ok: false, detail: 'timed out after 200 ms' });
    expect(events).toEqual(['spawned']);
    expect(readFileSync(`/proc/${pid}/stat`, 'latin1')).toMatch(/\) [ZRSD] /);
    await waitFor(() => events.length === 2, 'Node to reap it');
    expect(events).toEqual(['spawned', 'released true']);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});
