import { afterEach, describe, expect, it } from 'vitest';
// The package by its own name, as a user imports it (resolved through "exports").
import { supervise, type SupervisorHandle } from 'gsup';
import { PRINTER, fixture, killEverything } from '../helpers/gsup.js';
import { isAlive } from '../helpers/proc.js';

const handles: SupervisorHandle[] = [];
afterEach(async () => {
  for (const handle of handles.splice(0)) if (handle.pid && isAlive(handle.pid)) process.kill(handle.pid, 'SIGKILL');
});

function lines(handle: SupervisorHandle): { all: string[]; next: (pattern: RegExp) => Promise<string> } {
  const all: string[] = [];
  const waiters: Array<() => void> = [];
  handle.stdout!.setEncoding('utf8');
  handle.stdout!.on('data', (chunk: string) => {
    all.push(...chunk.split('\n').filter(Boolean));
    for (const waiter of waiters.splice(0)) waiter();
  });
  const next = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line matched ${pattern}: ${all.join(' | ')}`)), 10_000);
      const check = () => {
        const line = all.find((candidate) => pattern.test(candidate));
        if (line) {
          clearTimeout(timer);
          resolve(line);
        } else waiters.push(check);
      };
      check();
    });
  return { all, next };
}

// Every field of `health` but the probes (the library has no defaults for them).
const HEALTH = {
  intervalMs: 30_000,
  timeoutMs: 5000,
  retries: 3,
  startPeriodMs: 0,
  startIntervalMs: 5000,
  maxAgeMs: 60_000,
};

describe("import { supervise } from 'gsup'", () => {
  it('gives a handle: pid, signal(), stop(), exited', async () => {
    const handle = supervise('node', [PRINTER], { stdio: 'pipe' });
    handles.push(handle);
    const output = lines(handle);
    const ready = await output.next(/^ready/);
    expect(ready).toContain(`pid: ${handle.pid}`);
    handle.signal('SIGUSR2');
    await output.next(/^signal: SIGUSR2 /);
    const result = await handle.stop();
    expect(result).toEqual({ exitCode: 0, code: 0, signal: null, killed: false });
    expect(await handle.exited).toBe(result);
    expect(output.all.filter((line) => line.startsWith('signal: SIGTERM'))).toHaveLength(1);
  });

  // stop() applies the rewrite as the CLI does when the rule gives a stop signal; a rule that makes it
  // no stop signal does not turn the stop into something else: the signal goes out as given.
  it.each([
    ['SIGINT', 'SIGINT', 'SIGTERM'],
    ['SIGHUP', 'SIGTERM', 'SIGHUP'],
  ] as const)('stop() with SIGTERM→%s: the app gets %s once, and no %s', async (to, received, never) => {
    const handle = supervise('node', [PRINTER], { stdio: 'pipe', rewrite: new Map([['SIGTERM', to]]) });
    handles.push(handle);
    const output = lines(handle);
    await output.next(/^ready/);
    expect((await handle.stop()).exitCode).toBe(0);
    expect(output.all.filter((line) => line.startsWith(`signal: ${received}`))).toHaveLength(1);
    expect(output.all.filter((line) => line.startsWith(`signal: ${never}`))).toHaveLength(0);
  });

  it('refuses short signal names in rewrite (a rule that would never apply), before starting anything', () => {
    const short = new Map([['TERM', 'SIGINT']]) as unknown as Map<'SIGTERM', 'SIGINT'>;
    expect(() => supervise('node', [PRINTER], { rewrite: short })).toThrow(
      new TypeError(`rewrite: "TERM" is not a signal name: use full names such as 'SIGTERM'`),
    );
    const shortTo = new Map([['SIGTERM', 'INT']]) as unknown as Map<'SIGTERM', 'SIGINT'>;
    expect(() => supervise('node', [PRINTER], { rewrite: shortTo })).toThrow(
      /rewrite: "INT" \(for SIGTERM\) is not a signal name/,
    );
  });

  it('reports a kill and 128+9 when the kill timeout runs out', async () => {
    const handle = supervise('node', [PRINTER, '--ignore-stop'], { stdio: 'pipe', killTimeout: 200 });
    handles.push(handle);
    const output = lines(handle);
    await output.next(/^ready/);
    const result = await handle.stop('SIGINT');
    expect(JSON.stringify(result)).toBe(JSON.stringify({ exitCode: 137, code: null, signal: 'SIGKILL', killed: true }));
    expect(output.all.filter((line) => line.startsWith('signal: SIGINT'))).toHaveLength(1);
  });

  it("durations: milliseconds or strings with units (killTimeout '1s' is a second)", async () => {
    const options = { stdio: 'pipe', killTimeout: '1s', stopDelay: '500ms' } as const;
    const handle = supervise('node', [PRINTER, '--ignore-stop'], options);
    handles.push(handle);
    const output = lines(handle);
    await output.next(/^ready/);
    const asked = Date.now();
    const stopping = handle.stop();
    await output.next(/^signal: SIGTERM/);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(450); // the stop delay
    const result = await stopping;
    expect(Date.now() - asked).toBeGreaterThanOrEqual(1450); // then the kill timeout
    expect(result).toMatchObject({ exitCode: 137, killed: true });
  });

  it('checks its options at the call: a TypeError naming the option and the value', () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ killTimeout: '1' }, 'killTimeout: "1" is no duration: a string needs a unit'],
      [{ stopDelay: '2 seconds' }, 'stopDelay: "2 seconds" is no duration: use e.g. 500ms, 10s, 1m30s or 1h'],
      [{ restartDelay: -5 }, 'restartDelay: -5 is no duration: milliseconds from 0 to 2147483647'],
      [{ killTimeout: { s: 1 } }, 'killTimeout: an object is no duration: a number of ms or a string with units'],
      [{ target: 'pgroup' }, `target: "pgroup" is not one of 'group', 'child', 'tree'`],
      [{ maxRestarts: 1.5 }, 'maxRestarts: 1.5 is not a whole number from 0'],
      [{ health: { url: 'http://127.0.0.1:1/' } }, 'health.maxAgeMs is missing: the library takes every field'],
      [{ health: { intervalMs: '5s' } }, 'health: no probe: give at least one of cmd, url, file'],
      [{ health: { ...HEALTH, cmd: 'true', interval: '5s' } }, "health: unknown field 'interval'"],
      [{ health: { ...HEALTH, url: 'ftp://x/' } }, 'health.url: "ftp://x/" is not an http:// or https:// URL'],
      [{ health: { ...HEALTH, cmd: 'true', intervalMs: 0 } }, 'health.intervalMs: 0 must be above 0'],
      [{ health: { ...HEALTH, file: '/tmp/beat', retries: 0 } }, 'health.retries: 0 is not a whole number from 1'],
      [{ waitReady: 'yes' }, 'waitReady: "yes" is not true or false'],
      [{ waitReady: true, readyTimeout: '5' }, 'readyTimeout: "5" is no duration: a string needs a unit'],
      [{ waitReady: true, readyTimeout: 0 }, 'readyTimeout: 0 must be above 0'],
      [{ readyTimeout: '5s' }, 'readyTimeout: "5s" is given without waitReady: true or a reloadSignal'],
      [{ waitReady: true, reloadSignal: 'HUP' }, 'reloadSignal: "HUP" is not a signal name: use full names'],
      [{ waitReady: true, reloadSignal: 'SIGTERM' }, 'reloadSignal: SIGTERM cannot be the reload signal: SIGTERM is'],
      [{ reloadSignal: 'SIGHUP' }, 'reloadSignal: needs waitReady: true or held sockets (listen)'],
    ];
    for (const [options, message] of bad) {
      let thrown: unknown;
      try {
        supervise('node', [PRINTER], options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(TypeError);
      expect((thrown as Error).message).toContain(message);
    }
    // Nothing was started.
    expect(killEverything()).toEqual([]);
  });

  it('waitReady and readyTimeout: no word in time is a failed start, status 1 (the app exited 0)', async () => {
    // The timeout counts from the spawn, and must outlast the app's own start: with both cores busy node takes
    // 400-650 ms from spawn to its first line (as long as without gsup), and a SIGTERM that comes before its
    // handler ends it by the signal, before it printed anything (300 ms here once did that).
    const options = { stdio: 'pipe', waitReady: true, readyTimeout: '3s' } as const;
    const handle = supervise('node', [fixture('ready-app.js'), '--never'], options);
    handles.push(handle);
    const output = lines(handle);
    expect(await handle.exited).toMatchObject({ exitCode: 1, code: 0 });
    // It had started (its first line) when its one SIGTERM came.
    await output.next(/^signal: SIGTERM/);
    expect(output.all[0]).toMatch(/^ready \(pid/);
    expect(output.all.filter((line) => line.startsWith('signal: SIGTERM'))).toHaveLength(1);
  });

  it('health: durations with units work as milliseconds do', async () => {
    // A start period the app's own start fits in (a SIGTERM before its handler would end it by the signal: 143).
    const durations = { intervalMs: '100ms', timeoutMs: '1s', startIntervalMs: '100ms', startPeriodMs: '2s' };
    const health = { ...HEALTH, ...durations, cmd: 'exit 1', retries: 2 };
    const handle = supervise('node', [PRINTER], { stdio: 'pipe', health });
    handles.push(handle);
    const output = lines(handle);
    // Unhealthy after the start period and two failed probes, 100 ms apart: stopped (the app exits 0), never 0.
    expect((await handle.exited).exitCode).toBe(1);
    await output.next(/^signal: SIGTERM/);
  });

  it('reports a command that cannot be started', async () => {
    const result = await supervise('gsup-no-such-command').exited;
    expect(result).toMatchObject({ exitCode: 127, error: 'gsup-no-such-command: command not found' });
  });
});
