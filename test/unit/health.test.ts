import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthRecord, probeAll, type HealthConfig, type ProbeContext } from '../../src/engine/health.js';
import { currentPlatform } from '../../src/platform/index.js';

const config: HealthConfig = { maxAgeMs: 60_000, intervalMs: 30_000, timeoutMs: 5000, retries: 3, startIntervalMs: 5000, startPeriodMs: 10_000 };
const ok = { ok: true, detail: 'exit 0' };
const failed = { ok: false, detail: 'exit 1' };

describe('HealthRecord (Docker’s rules)', () => {
  it('retries failures in a row make it unhealthy; a success in between resets the count', () => {
    const record = new HealthRecord({ ...config, startPeriodMs: 0 });
    record.reset(0);
    expect(record.record(failed, 1).state).toBe('starting');
    expect(record.record(failed, 2).state).toBe('starting');
    expect(record.record(ok, 3).state).toBe('healthy');
    expect(record.record(failed, 4)).toEqual({ state: 'healthy', counted: true });
    expect(record.record(failed, 5).state).toBe('healthy');
    expect(record.record(failed, 6).state).toBe('unhealthy');
  });

  it('failures in the start period do not count; after it they do', () => {
    const record = new HealthRecord(config);
    record.reset(1000);
    for (let at = 1000; at < 11_000; at += 1000) expect(record.record(failed, at)).toEqual({ state: 'starting', counted: false });
    expect(record.record(failed, 11_000)).toEqual({ state: 'starting', counted: true });
  });

  it('a success ends the start period at once', () => {
    const record = new HealthRecord({ ...config, retries: 1 });
    record.reset(0);
    record.record(ok, 100);
    expect(record.record(failed, 200).state).toBe('unhealthy');
  });

  it('a new run starts the start period again', () => {
    const record = new HealthRecord({ ...config, retries: 1 });
    record.reset(0);
    record.record(ok, 100);
    record.reset(20_000);
    expect(record.record(failed, 20_100)).toEqual({ state: 'starting', counted: false });
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

  const context: ProbeContext = { platform: currentPlatform(), cwd: '/', env: {}, spawned: () => {}, ended: () => {} };
  const probe = (url: string) => probeAll({ ...config, url }, context, new AbortController().signal);

  it('200–399 is healthy, as Kubernetes’ httpGet; a redirect is not followed', async () => {
    const { base, asked } = await serve();
    for (const status of [200, 204, 301, 302, 307, 399, 400, 404, 500, 503]) {
      expect(await probe(`${base}/${status}`), String(status)).toEqual({ ok: status < 400, detail: `HTTP ${status}` });
    }
    expect(asked).not.toContain('/elsewhere'); // the 3xx answers' Location was never asked for
  });
});
