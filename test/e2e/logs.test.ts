import { describe, expect, it } from 'vitest';
import { PRINTER, gsup } from '../helpers/gsup.js';

async function stopOnce(args: string[], env?: NodeJS.ProcessEnv) {
  const run = gsup([...args, '--', 'node', PRINTER], { env });
  await run.ready();
  run.signal('SIGUSR1');
  await run.waitForLine(/^signal: SIGUSR1 /);
  run.signal('SIGTERM');
  await run.finished();
  return run;
}

describe('logs on stderr', () => {
  it('by default: the start of the stop and its summary, nothing else', async () => {
    const run = await stopOnce([]);
    expect(run.stderr).toHaveLength(2);
    expect(run.stderr[0]).toMatch(
      /^\[gsup\] SIGTERM received: stopping the tree with SIGTERM \(kill timeout 8\.00s\)$/,
    );
    expect(run.stderr[1]).toMatch(/^\[gsup\] stopped in \d+ms: 1 exited by themselves, 0 killed$/);
  });

  it('-v: every forwarded signal with its targets, and tree changes', async () => {
    const run = await stopOnce(['-v']);
    const text = run.stderr.join('\n');
    expect(text).toMatch(/\[gsup\] SIGUSR1 → group \d+$/m);
    expect(text).toMatch(/\[gsup\] SIGTERM → group \d+$/m); // no count: the kernel reaches who is in it at the send
    expect(text).toMatch(/left the tree/);
  });

  it('-v with a rewrite: the forward names the signal received and the one sent (`SIGUSR1 (as SIGUSR2) → group N`)', async () => {
    const run = gsup(['-v', '-r', 'USR1:USR2', '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR2 /);
    run.signal('SIGTERM');
    await run.finished();
    expect(run.count(/^signal: SIGUSR/)).toBe(1); // the rewritten one, once
    const forwards = run.stderr.filter((line) => line.includes('USR'));
    expect(forwards).toEqual([expect.stringMatching(/^\[gsup\] SIGUSR1 \(as SIGUSR2\) → group \d+$/)]);
  });

  it('-q: nothing but errors', async () => {
    const run = await stopOnce(['-q']);
    expect(run.stderr).toEqual([]);
  });

  it('GSUP_VERBOSE=1 is -v, and -q wins over it', async () => {
    expect((await stopOnce([], { GSUP_VERBOSE: '1' })).stderr.join('\n')).toMatch(/SIGUSR1 → group/);
    expect((await stopOnce(['-q'], { GSUP_VERBOSE: '1' })).stderr).toEqual([]);
  });

  it('GSUP_VERBOSE=-1 is -q: errors only (a bad command still says why), and -v wins over it', async () => {
    expect((await stopOnce([], { GSUP_VERBOSE: '-1' })).stderr).toEqual([]);
    expect((await stopOnce(['-v'], { GSUP_VERBOSE: '-1' })).stderr.join('\n')).toMatch(/SIGUSR1 → group/);
    const missing = gsup(['--', 'no-such-command-gsup'], { env: { GSUP_VERBOSE: '-1' } });
    expect((await missing.finished()).code).toBe(127);
    expect(missing.stderr).toEqual(['gsup: no-such-command-gsup: command not found']);
  });

  it('--log-format json: one object per line with time, level, event', async () => {
    const run = await stopOnce(['-v', '--log-format', 'json']);
    const events = run.stderr.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const event of events) {
      expect(typeof event.time).toBe('string');
      expect(Number.isNaN(Date.parse(event.time as string))).toBe(false);
      expect(['error', 'warn', 'notice', 'info', 'debug']).toContain(event.level);
      expect(typeof event.event).toBe('string');
    }
    const names = events.map((event) => event.event);
    expect(names).toContain('forward');
    expect(names).toContain('stop');
    const stopped = events.find((event) => event.event === 'stopped')!;
    expect(stopped).toMatchObject({ exited: 1, killed: [] });
    expect(typeof stopped.durationMs).toBe('number');
  });

  it('colour only when asked for off a TTY (FORCE_COLOR), none with NO_COLOR', async () => {
    const plain = await stopOnce([]);
    expect(plain.stderr.join('\n')).not.toContain('\u001b[');
    const forced = await stopOnce([], { NO_COLOR: '', FORCE_COLOR: '1' });
    expect(forced.stderr.join('\n')).toContain('\u001b[');
  });
});

describe('what the tree wrote, in a log line', () => {
  it('a command line with ESC, CR and a forged line, killed: escaped in the summary, no forged line', async () => {
    const note = '\u001b[2J\u001b[31mred\r\n[gsup] forged';
    const run = gsup(['-t', '300ms', '--', 'node', PRINTER, '--ignore-stop', '--note', note]);
    await run.ready();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM /);
    expect((await run.finished()).code).toBe(137);
    const summary = run.stderr.find((line) => line.startsWith('[gsup] stopped in '));
    const escaped = '--note \\x1b[2J\\x1b[31mred\\r\\n[gsup] forged';
    expect(summary).toMatch(/ 1 killed: \d+ \(node .*printer\.js --ignore-stop /);
    expect(summary?.endsWith(`${escaped})`)).toBe(true);
    expect(run.stderr.filter((line) => line.startsWith('[gsup] forged'))).toEqual([]);
    expect(run.stderr.join('\n')).not.toMatch(/[\u001b\r]/);
  });
});
