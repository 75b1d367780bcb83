import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/options/cli-options.js';
import { parseDuration } from '../../src/options/duration.js';
import { UsageError } from '../../src/options/errors.js';
import { parseRewrite, parseSignal } from '../../src/options/signals.js';
import { forwardableSignals } from '../../src/signals.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['2m', 120_000],
    ['1.5s', 1500],
    ['250', 250],
    ['0', 0],
  ])('%s is %i ms', (text, ms) => expect(parseDuration(text, '-t')).toBe(ms));

  it.each(['10x', '-1', '', 's', '1h', '1 s5'])('rejects %j', (text) => {
    expect(() => parseDuration(text, '--kill-timeout')).toThrow(UsageError);
    expect(() => parseDuration(text, '--kill-timeout')).toThrow(`"${text}" for --kill-timeout`);
  });
});

describe('signals', () => {
  it('parses names, short names, numbers', () => {
    expect(parseSignal('TERM', 'x')).toBe('SIGTERM');
    expect(parseSignal('sigint', 'x')).toBe('SIGINT');
    expect(parseSignal('15', 'x')).toBe('SIGTERM');
    expect(parseSignal('0', 'x', true)).toBeNull();
    expect(() => parseSignal('0', 'x')).toThrow(UsageError);
    expect(() => parseSignal('FOO', 'x')).toThrow('invalid signal "FOO"');
    expect(() => parseSignal('64', 'x')).toThrow(UsageError);
  });

  it('parses rewrites, 0 drops', () => {
    expect(parseRewrite('TERM:INT')).toEqual(['SIGTERM', 'SIGINT']);
    expect(parseRewrite('15:2')).toEqual(['SIGTERM', 'SIGINT']);
    expect(parseRewrite('WINCH:0')).toEqual(['SIGWINCH', null]);
    expect(() => parseRewrite('TERM')).toThrow(UsageError);
    expect(() => parseRewrite('STOP:TERM')).toThrow('never received');
  });

  it('forwards every catchable signal 1-31 but KILL, STOP, CHLD', () => {
    const signals = forwardableSignals();
    expect(signals).toHaveLength(28);
    expect(signals).not.toContain('SIGKILL');
    expect(signals).not.toContain('SIGSTOP');
    expect(signals).not.toContain('SIGCHLD');
    expect(signals).toContain('SIGWINCH');
    expect(signals).toContain('SIGTSTP');
  });
});

describe('parseCommandLine', () => {
  const parse = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const request = await parseCommandLine(argv, env, '1.2.3', () => {});
    if (request.kind !== 'run') throw new Error('expected a run');
    return request.options;
  };

  it('--grace: the kill timeout defaults to grace − stop delay − 1 s (never below 0); an explicit one that does not fit is refused', async () => {
    expect((await parse(['--grace', '30s', 'x'])).killTimeout).toBe(29_000);
    expect((await parse(['--grace', '30s', '--stop-delay', '5s', 'x'])).killTimeout).toBe(24_000);
    expect((await parse(['x'], { GSUP_GRACE: '500ms' })).killTimeout).toBe(0);
    expect((await parse(['--grace', '30s', '-t', '20s', '--stop-delay', '10s', 'x'])).killTimeout).toBe(20_000); // fits exactly
    await expect(parse(['--grace', '30s', '-t', '25s', '--stop-delay', '10s', 'x'])).rejects.toThrow('--kill-timeout 25.00s + --stop-delay 10.00s is over --grace 30.00s by 5.00s');
    await expect(parse(['--stop-delay', '3s', 'x'], { GSUP_GRACE: '2s' })).rejects.toThrow('--stop-delay 3.00s is over GSUP_GRACE 2.00s by 1.00s');
    expect((await parse(['-t', '3s', 'x'])).killTimeout).toBe(3000); // no grace: as given
  });

  it('--status-port and --status-host (and their variables); a bad port is refused', async () => {
    expect((await parse(['x'])).status).toBeUndefined();
    expect((await parse(['--status-port', '9100', 'x'])).status).toEqual({ port: 9100, host: '0.0.0.0' });
    expect((await parse(['x'], { GSUP_STATUS_PORT: '8081', GSUP_STATUS_HOST: '127.0.0.1' })).status).toEqual({ port: 8081, host: '127.0.0.1' });
    await expect(parse(['--status-port', '70000', 'x'])).rejects.toThrow('invalid port "70000" for --status-port: expected 1-65535');
    await expect(parse(['x'], { GSUP_STATUS_PORT: 'http' })).rejects.toThrow('invalid port "http" for GSUP_STATUS_PORT');
  });

  it('--health-start-interval defaults to 5 s (Docker 25)', async () => {
    expect((await parse(['--health-cmd', 'true', 'x'])).health?.startIntervalMs).toBe(5000);
    expect((await parse(['--health-cmd', 'true', '--health-start-interval', '200ms', 'x'])).health?.startIntervalMs).toBe(200);
  });

  it('has the spec defaults', async () => {
    expect(await parse(['node', 'app.js'])).toEqual({
      command: 'node',
      args: ['app.js'],
      killTimeout: 10_000,
      stopDelay: 0,
      target: 'group',
      onExit: 'auto',
      logFormat: 'text',
      rewrite: new Map(),
      successExit: [],
      verbosity: 0,
      subreaper: true,
      pm2: true,
      restart: 'never',
      maxRestarts: 10,
      restartDelay: 1000,
    });
  });

  it('stops at the command: its options are its own', async () => {
    expect(await parse(['-t', '1s', 'node', '-e', '1', '-v'])).toMatchObject({ command: 'node', args: ['-e', '1', '-v'], killTimeout: 1000, verbosity: 0 });
    expect(await parse(['--', '-weird-name'])).toMatchObject({ command: '-weird-name', args: [] });
  });

  it('reads every variable, and a flag wins over it', async () => {
    const env = {
      GSUP_KILL_TIMEOUT: '3s',
      GSUP_TARGET: 'tree',
      GSUP_REWRITE: 'TERM:INT,WINCH:0',
      GSUP_STOP_DELAY: '2s',
      GSUP_ON_EXIT: 'wait',
      GSUP_SUCCESS_EXIT: '143, 3',
      GSUP_VERBOSE: '2',
      GSUP_LOG_FORMAT: 'json',
      GSUP_RESTART: 'on-failure',
      GSUP_MAX_RESTARTS: '3',
      GSUP_RESTART_DELAY: '250ms',
    };
    expect(await parse(['x'], env)).toMatchObject({
      killTimeout: 3000,
      target: 'tree',
      rewrite: new Map([
        ['SIGTERM', 'SIGINT'],
        ['SIGWINCH', null],
      ]),
      stopDelay: 2000,
      onExit: 'wait',
      successExit: [143, 3],
      verbosity: 2,
      logFormat: 'json',
      restart: 'on-failure',
      maxRestarts: 3,
      restartDelay: 250,
    });
    expect(await parse(['-t', '1s', '--target', 'child', '-r', 'HUP:USR1', '-e', '2', '-q', 'x'], env)).toMatchObject({
      killTimeout: 1000,
      target: 'child',
      rewrite: new Map([['SIGHUP', 'SIGUSR1']]),
      successExit: [2],
      verbosity: -1,
    });
  });

  it('--no-subreaper and GSUP_SUBREAPER=0 turn the subreaper off', async () => {
    expect((await parse(['--no-subreaper', 'x'])).subreaper).toBe(false);
    expect((await parse(['x'], { GSUP_SUBREAPER: '0' })).subreaper).toBe(false);
    expect((await parse(['x'], { GSUP_SUBREAPER: '1' })).subreaper).toBe(true);
    await expect(parse(['x'], { GSUP_SUBREAPER: 'maybe' })).rejects.toThrow('invalid value "maybe" for GSUP_SUBREAPER');
  });

  it('--no-pm2 and GSUP_PM2=0 turn pm2 support off', async () => {
    expect((await parse(['--no-pm2', 'x'])).pm2).toBe(false);
    expect((await parse(['x'], { GSUP_PM2: '0' })).pm2).toBe(false);
    expect((await parse(['x'])).pm2).toBe(true);
  });

  it('counts -v', async () => {
    expect((await parse(['-v', 'x'])).verbosity).toBe(1);
    expect((await parse(['-vv', 'x'])).verbosity).toBe(2);
    expect((await parse(['-v', '-v', '-v', 'x'])).verbosity).toBe(2);
  });

  it('answers help and version without running anything', async () => {
    const out: string[] = [];
    expect(await parseCommandLine(['--version'], {}, '1.2.3', (text) => out.push(text))).toEqual({ kind: 'done' });
    expect(out.join('')).toBe('1.2.3\n');
  });
});
