import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HealthRecord, probeAll, type HealthConfig, type ProbeContext } from '../../src/engine/health.js';
import { linuxPlatform } from '../../src/platform/linux.js';
import { waitFor } from '../helpers/proc.js';

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
    const result = await probeAll({ ...config, cmd: 'sleep 30', file: undefined, timeoutMs: 200 }, context, new AbortController().signal);
    // The result comes in the timer's callback, where the SIGKILL was sent: sh is still a child of Node's, unreaped.
    expect(result).toEqual({ ok: false, detail: 'timed out after 200 ms' });
    expect(events).toEqual(['spawned']);
    expect(readFileSync(`/proc/${pid}/stat`, 'latin1')).toMatch(/\) [ZRSD] /);
    await waitFor(() => events.length === 2, 'Node to reap it');
    expect(events).toEqual(['spawned', 'released true']);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});
