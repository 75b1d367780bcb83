import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/options/cli-options.js';
import { parseDuration } from '../../src/options/duration.js';
import { UsageError } from '../../src/options/errors.js';
import { parseRewrite, parseSignal } from '../../src/options/signals.js';
import { forwardableSignals } from '../../src/platform/signals.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['2m', 120_000],
    ['1.5s', 1500],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['2.5m', 150_000],
    [' 5s ', 5000],
    ['0', 0],
    ['0s', 0],
  ])('%s is %i ms', (text, ms) => expect(parseDuration(text, '-t')).toBe(ms));

  it.each(['10x', '-1', '', 's', '1 s5', '1m30', '30s1m', '1s1s', '1.5.5s', '1d', 'ms'])('rejects %j', (text) => {
    expect(() => parseDuration(text, '--kill-timeout')).toThrow(UsageError);
    expect(() => parseDuration(text, '-t')).toThrow(`"${text}" for -t: use e.g. 500ms, 10s, 1m30s or 1h`);
  });

  // Docker and Kubernetes count seconds, pm2 milliseconds: `GSUP_GRACE=30` was a 30 ms grace.
  it.each([
    ['30', 'GSUP_GRACE', 'invalid duration "30" for GSUP_GRACE: a number needs a unit: 30s or 30000ms'],
    ['8', '--kill-timeout', 'invalid duration "8" for --kill-timeout: a number needs a unit: 8s or 8000ms'],
    ['1.1', '--stop-delay', 'invalid duration "1.1" for --stop-delay: a number needs a unit: 1.1s or 1100ms'],
    ['250', '-t', 'invalid duration "250" for -t: a number needs a unit: 250s or 250000ms'],
  ])('refuses the bare number %j, naming both readings', (text, what, message) => {
    expect(() => parseDuration(text, what)).toThrow(new UsageError(message));
  });

  it('refuses what a timer cannot hold (2^31-1 ms), with or without hours', () => {
    expect(parseDuration('596h31m23s647ms', '-t')).toBe(2 ** 31 - 1);
    expect(() => parseDuration('597h', '-t')).toThrow('invalid duration "597h" for -t: at most 2147483647 ms');
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
    expect((await parse(['--grace', '30s', '-t', '20s', '--stop-delay', '10s', 'x'])).killTimeout).toBe(20_000); // fits exactly
    await expect(parse(['--grace', '30s', '-t', '25s', '--stop-delay', '10s', 'x'])).rejects.toThrow(
      '--kill-timeout 25.00s + --stop-delay 10.00s is over --grace 30.00s by 5.00s',
    );
    await expect(parse(['--stop-delay', '3s', 'x'], { GSUP_GRACE: '2s' })).rejects.toThrow(
      '--stop-delay 3.00s is over GSUP_GRACE 2.00s by 1.00s',
    );
    expect((await parse(['-t', '3s', 'x'])).killTimeout).toBe(3000); // no grace: as given
  });

  it('--grace with no room for a kill timeout of 1 s is refused, saying what would fit; -t is as given', async () => {
    await expect(parse(['--grace', '3s', '--stop-delay', '2s', 'x'])).rejects.toThrow(
      new UsageError(
        '--grace 3s is too short for --stop-delay 2s: it must hold the stop delay, a kill timeout of at least 1s ' +
          'and 1s to spare, so use --grace 4s or more (or --stop-delay 1s or less)',
      ),
    );
    await expect(parse(['x'], { GSUP_GRACE: '1500ms' })).rejects.toThrow(
      new UsageError(
        'GSUP_GRACE 1.5s is too short: it must hold a kill timeout of at least 1s and 1s to spare, ' +
          'so use GSUP_GRACE 2s or more',
      ),
    );
    // A grace that leaves no room even without the stop delay: only a longer grace helps.
    await expect(parse(['--grace', '1s', '--stop-delay', '500ms', 'x'])).rejects.toThrow(
      new UsageError(
        '--grace 1s is too short for --stop-delay 500ms: it must hold the stop delay, a kill timeout of at least ' +
          '1s and 1s to spare, so use --grace 2.5s or more',
      ),
    );
    await expect(parse(['--grace', '2s', '--stop-delay', '1s', 'x'])).rejects.toThrow(
      'so use --grace 3s or more (or no --stop-delay)',
    );
    expect((await parse(['--grace', '4s', '--stop-delay', '2s', 'x'])).killTimeout).toBe(1000); // exactly 1 s: allowed
    // Explicit: fits in the grace, however short; and without --grace anything goes (-t 0: SIGKILL at once).
    expect((await parse(['--grace', '3s', '--stop-delay', '2s', '-t', '500ms', 'x'])).killTimeout).toBe(500);
    expect((await parse(['-t', '500ms', 'x'])).killTimeout).toBe(500);
    expect((await parse(['-t', '0', 'x'])).killTimeout).toBe(0);
  });

  it('every duration option refuses a bare number, flag and variable alike', async () => {
    const options: Array<[string, string]> = [
      ['--kill-timeout', 'GSUP_KILL_TIMEOUT'],
      ['--stop-delay', 'GSUP_STOP_DELAY'],
      ['--grace', 'GSUP_GRACE'],
      ['--restart-delay', 'GSUP_RESTART_DELAY'],
      ['--health-interval', 'GSUP_HEALTH_INTERVAL'],
      ['--health-timeout', 'GSUP_HEALTH_TIMEOUT'],
      ['--health-start-period', 'GSUP_HEALTH_START_PERIOD'],
      ['--health-start-interval', 'GSUP_HEALTH_START_INTERVAL'],
      ['--health-max-age', 'GSUP_HEALTH_MAX_AGE'],
    ];
    for (const [flag, variable] of options) {
      const probe = flag.startsWith('--health') ? ['--health-cmd', 'true'] : [];
      const unit = 'a number needs a unit: 30s or 30000ms';
      await expect(parse([...probe, flag, '30', 'x'])).rejects.toThrow(`invalid duration "30" for ${flag}: ${unit}`);
      const fromEnv = parse([...probe, 'x'], { [variable]: '30' });
      await expect(fromEnv).rejects.toThrow(`invalid duration "30" for ${variable}: ${unit}`);
      await expect(parse([...probe, flag, '1m30s', 'x'])).resolves.toBeDefined();
    }
  });

  it('--status-port and --status-host (and their variables); a bad port is refused', async () => {
    expect((await parse(['x'])).status).toBeUndefined();
    // No host given: the server takes `::` (IPv6 and IPv4), or 0.0.0.0 where there is no IPv6.
    expect((await parse(['--status-port', '9100', 'x'])).status).toEqual({ port: 9100, host: undefined });
    expect((await parse(['x'], { GSUP_STATUS_PORT: '8081', GSUP_STATUS_HOST: '127.0.0.1' })).status).toEqual({
      port: 8081,
      host: '127.0.0.1',
    });
    await expect(parse(['--status-port', '70000', 'x'])).rejects.toThrow(
      'invalid port "70000" for --status-port: expected 1-65535',
    );
    await expect(parse(['x'], { GSUP_STATUS_PORT: 'http' })).rejects.toThrow(
      'invalid port "http" for GSUP_STATUS_PORT',
    );
  });

  it('--health-start-interval defaults to 5 s (Docker 25)', async () => {
    expect((await parse(['--health-cmd', 'true', 'x'])).health?.startIntervalMs).toBe(5000);
    expect(
      (await parse(['--health-cmd', 'true', '--health-start-interval', '200ms', 'x'])).health?.startIntervalMs,
    ).toBe(200);
  });

  it('has the spec defaults', async () => {
    expect(await parse(['node', 'app.js'])).toEqual({
      command: 'node',
      args: ['app.js'],
      killTimeout: 8000, // under docker stop's 10 s
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
      waitReady: false,
      reloadDrain: 6000, // a little over Node's own keep-alive timeout (5 s)
      listen: [],
      listenPreload: true,
      ignored: [],
    });
  });

  it('--wait-ready, --ready-timeout and their variables; a timeout of 0 is refused, one without the wait ignored', async () => {
    expect(await parse(['--wait-ready', 'x'])).toMatchObject({ waitReady: true, readyTimeout: undefined });
    const env = { GSUP_WAIT_READY: '1', GSUP_READY_TIMEOUT: '30s' };
    expect(await parse(['x'], env)).toMatchObject({ waitReady: true, readyTimeout: 30_000 });
    expect(await parse(['--wait-ready', '--ready-timeout', '1m', 'x'])).toMatchObject({ readyTimeout: 60_000 });
    expect(await parse(['x'], { GSUP_WAIT_READY: '0' })).toMatchObject({ waitReady: false });
    // Without the wait: nothing to time out (test/unit/options-needs.test.ts), the value still checked.
    expect(await parse(['--ready-timeout', '5s', 'x'])).toMatchObject({ waitReady: false, readyTimeout: undefined });
    await expect(parse(['--ready-timeout', '0s', 'x'])).rejects.toThrow('invalid value "0s" for --ready-timeout');
    const timeout = (value: string) => parse(['--wait-ready', '--ready-timeout', value, 'x']);
    await expect(timeout('0s')).rejects.toThrow('invalid value "0s" for --ready-timeout: must be above 0');
    await expect(timeout('30')).rejects.toThrow('invalid duration "30" for --ready-timeout: a number needs a unit');
    const maybe = parse(['x'], { GSUP_WAIT_READY: 'maybe' });
    await expect(maybe).rejects.toThrow('invalid value "maybe" for GSUP_WAIT_READY: expected 0 or 1');
  });

  it('--reload-drain and GSUP_RELOAD_DRAIN: a duration with a unit', async () => {
    const reload = ['--listen', '8080', '--reload-signal', 'HUP'];
    expect(await parse([...reload, '--reload-drain', '1m30s', 'x'])).toMatchObject({ reloadDrain: 90_000 });
    expect(await parse([...reload, 'x'], { GSUP_RELOAD_DRAIN: '0' })).toMatchObject({ reloadDrain: 0 });
    await expect(parse([...reload, '--reload-drain', '6', 'x'])).rejects.toThrow(
      'invalid duration "6" for --reload-drain: a number needs a unit',
    );
  });

  it('--reload-signal and GSUP_RELOAD_SIGNAL: a signal with nothing else to mean, and something to say ready', async () => {
    expect(await parse(['x'])).toMatchObject({ reloadSignal: undefined });
    expect(await parse(['--wait-ready', '--reload-signal', 'hup', 'x'])).toMatchObject({ reloadSignal: 'SIGHUP' });
    expect(await parse(['--listen', '8080', '--reload-signal', '12', 'x'])).toMatchObject({ reloadSignal: 'SIGUSR2' });
    const env = { GSUP_RELOAD_SIGNAL: 'SIGUSR1', GSUP_WAIT_READY: '1' };
    expect(await parse(['x'], env)).toMatchObject({ reloadSignal: 'SIGUSR1' });
    // --ready-timeout is a reload's too: it needs no --wait-ready then.
    const timed = ['--listen', '8080', '--reload-signal', 'HUP', '--ready-timeout', '5s', 'x'];
    expect(await parse(timed)).toMatchObject({ readyTimeout: 5000, waitReady: false });
    const refused = (args: string[]) => parse([...args, 'x']);
    await expect(refused(['--reload-signal', 'HUP'])).rejects.toThrow(
      new UsageError(
        '--reload-signal "HUP" needs --listen or --wait-ready: nothing would say when the new run is ready',
      ),
    );
    for (const [signal, why] of [
      ['TERM', 'SIGTERM is a stop signal'],
      ['INT', 'SIGINT is a stop signal'],
      ['TSTP', 'SIGTSTP is job control'],
      ['TTIN', 'SIGTTIN is job control'],
      ['TTOU', 'SIGTTOU is job control'],
      ['KILL', 'gsup cannot take SIGKILL as a request'],
      ['STOP', 'gsup cannot take SIGSTOP as a request'],
      ['CHLD', 'gsup cannot take SIGCHLD as a request'],
    ])
      await expect(refused(['--wait-ready', '--reload-signal', signal])).rejects.toThrow(
        new UsageError(`invalid signal "${signal}" for --reload-signal: ${why}`),
      );
    await expect(refused(['--wait-ready', '-p', 'HUP', '--reload-signal', 'HUP'])).rejects.toThrow(
      'SIGHUP is the --pdeathsig signal',
    );
    await expect(refused(['--wait-ready', '-r', 'USR2:0', '--reload-signal', 'USR2'])).rejects.toThrow(
      'a --rewrite rule rewrites SIGUSR2',
    );
    // A rule that turns another signal into it is no rule for it: the received signal is what reloads.
    expect(await parse(['--wait-ready', '-r', 'USR1:HUP', '--reload-signal', 'HUP', 'x'])).toMatchObject({
      reloadSignal: 'SIGHUP',
    });
  });

  it('stops at the command: its options are its own', async () => {
    expect(await parse(['-t', '1s', 'node', '-e', '1', '-v'])).toMatchObject({
      command: 'node',
      args: ['-e', '1', '-v'],
      killTimeout: 1000,
      verbosity: 0,
    });
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

  it('-p and GSUP_PDEATHSIG take a signal as -r does (the flag wins); none by default', async () => {
    expect((await parse(['x'])).pdeathsig).toBeUndefined();
    expect((await parse(['-p', 'TERM', 'x'])).pdeathsig).toBe('SIGTERM');
    expect((await parse(['--pdeathsig', '10', 'x'])).pdeathsig).toBe('SIGUSR1');
    expect((await parse(['x'], { GSUP_PDEATHSIG: 'sigint' })).pdeathsig).toBe('SIGINT');
    expect((await parse(['-p', 'HUP', 'x'], { GSUP_PDEATHSIG: 'INT' })).pdeathsig).toBe('SIGHUP');
    await expect(parse(['-p', 'KILL', 'x'])).rejects.toThrow(UsageError);
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
