import { describe, expect, it } from 'vitest';
import { gsup } from '../helpers/gsup.js';

describe('bad input: one line naming the value, exit 125, no stack trace', () => {
  it.each([
    [[], {}, /^gsup: no command given/],
    [['--foo', 'true'], {}, /^gsup: unknown option '--foo'/],
    [['-t', '10x', 'true'], {}, /^gsup: invalid duration "10x" for --kill-timeout/],
    [['-t', '-1', 'true'], {}, /^gsup: invalid duration "-1" for --kill-timeout/],
    [['--stop-delay', 'soon', 'true'], {}, /^gsup: invalid duration "soon" for --stop-delay/],
    [['-r', 'FOO:INT', 'true'], {}, /^gsup: invalid signal "FOO" in --rewrite "FOO:INT"/],
    [['-r', 'TERM', 'true'], {}, /^gsup: invalid rewrite "TERM"/],
    [['-r', 'KILL:TERM', 'true'], {}, /^gsup: invalid rewrite "KILL:TERM" in --rewrite: KILL is never received/],
    [['--target', 'nope', 'true'], {}, /^gsup: invalid value "nope" for --target: expected group, child, tree/],
    [['--on-exit', 'nope', 'true'], {}, /^gsup: invalid value "nope" for --on-exit: expected auto, stop, wait, exit/],
    [['--log-format', 'xml', 'true'], {}, /^gsup: invalid value "xml" for --log-format/],
    [['-e', '300', 'true'], {}, /^gsup: invalid exit code "300" for --success-exit/],
    [['--target'], {}, /^gsup: option '--target <mode>' argument missing/],
    [
      ['--restart', 'sometimes', 'true'],
      {},
      /^gsup: invalid value "sometimes" for --restart: expected never, on-failure, always/,
    ],
    [['--max-restarts', 'many', 'true'], {}, /^gsup: invalid number "many" for --max-restarts/],
    // A count beyond 2^53−1: refused as a number, naming where it came from, never an internal error.
    [
      ['--max-restarts', '99999999999999999999', 'true'],
      {},
      /^gsup: invalid number "99999999999999999999" for --max-restarts: at most 9007199254740991$/,
    ],
    [
      ['true'],
      { GSUP_HEALTH_RETRIES: '99999999999999999999', GSUP_HEALTH_CMD: 'true' },
      /^gsup: invalid number "99999999999999999999" for GSUP_HEALTH_RETRIES: at most 9007199254740991$/,
    ],
    [['--restart-delay', '1y', 'true'], {}, /^gsup: invalid duration "1y" for --restart-delay/],
    [['true'], { GSUP_PM2: 'perhaps' }, /^gsup: invalid value "perhaps" for GSUP_PM2/],
    [['true'], { GSUP_KILL_TIMEOUT: '10x' }, /^gsup: invalid duration "10x" for GSUP_KILL_TIMEOUT/],
    [['true'], { GSUP_TARGET: 'nope' }, /^gsup: invalid value "nope" for GSUP_TARGET/],
    [['true'], { GSUP_REWRITE: 'TERM:BOGUS' }, /^gsup: invalid signal "BOGUS" in GSUP_REWRITE "TERM:BOGUS"/],
    [['true'], { GSUP_REWRITE: 'USR1:USR2, TERM' }, /^gsup: invalid rewrite "TERM" in GSUP_REWRITE: expected FROM:TO/],
    [
      ['true'],
      { GSUP_REWRITE: 'KILL:TERM' },
      /^gsup: invalid rewrite "KILL:TERM" in GSUP_REWRITE: KILL is never received/,
    ],
    // Beyond what a timer holds (2^31-1 ms): Node would warn and fire after 1 ms.
    [
      ['--stop-delay', '2147484s', 'true'],
      {},
      /^gsup: invalid duration "2147484s" for --stop-delay: at most 2147483647 ms/,
    ],
    [
      ['--restart-delay', '36000m', 'true'],
      {},
      /^gsup: invalid duration "36000m" for --restart-delay: at most 2147483647 ms/,
    ],
    [['-t', '2147483648ms', 'true'], {}, /^gsup: invalid duration "2147483648ms" for --kill-timeout: at most/],
    // A bare number: seconds (Docker, Kubernetes) or milliseconds (pm2)? Refused, with both spelled out.
    [['true'], { GSUP_GRACE: '30' }, /^gsup: invalid duration "30" for GSUP_GRACE: .*unit: 30s or 30000ms$/],
    [['true'], { GSUP_KILL_TIMEOUT: '8' }, /^gsup: invalid duration "8" for GSUP_KILL_TIMEOUT: a number needs a unit/],
    [['-t', '1000', 'true'], {}, /^gsup: invalid duration "1000" for --kill-timeout: a number needs a unit: 1000s or/],
    [['--health-cmd', 'true', '--health-interval', '30', 'true'], {}, /^gsup: invalid duration "30" for --health-/],
    // A --grace with no room for a kill timeout of 1 s.
    [
      ['--grace', '3s', '--stop-delay', '2s', 'true'],
      {},
      /^gsup: --grace 3s is too short for --stop-delay 2s: .* so use --grace 4s or more \(or --stop-delay 1s or less\)$/,
    ],
    [['true'], { GSUP_STOP_DELAY: '3000000s' }, /^gsup: invalid duration "3000000s" for GSUP_STOP_DELAY: at most/],
    [
      ['--health-interval', '0', '--health-cmd', 'true', 'true'],
      {},
      /^gsup: invalid value "0" for --health-interval: must be above 0/,
    ],
    [
      ['--health-url', 'localhost:8080/health', 'true'],
      {},
      /^gsup: invalid URL "localhost:8080\/health" for --health-url: only http:\/\/ and https:\/\//,
    ],
    [
      ['true'],
      { GSUP_HEALTH_RETRIES: 'x', GSUP_HEALTH_CMD: 'true' },
      /^gsup: invalid number "x" for GSUP_HEALTH_RETRIES/,
    ],
    [['true'], { GSUP_HEALTH_TIMEOUT: '5 s' }, /^gsup: invalid duration "5 s" for GSUP_HEALTH_TIMEOUT/],
    [['true'], { GSUP_VERBOSE: '7' }, /^gsup: invalid value "7" for GSUP_VERBOSE/],
    [['true'], { GSUP_SUCCESS_EXIT: 'x' }, /^gsup: invalid exit code "x" for GSUP_SUCCESS_EXIT/],
    // Caught at start, not as an internal error, nor a probe that always passes, nor a stop 30 s later.
    [['--', ''], {}, /^gsup: the command is empty: nothing to run$/],
    [['--', '  '], {}, /^gsup: the command is empty/],
    [['--health-cmd', '', 'true'], {}, /^gsup: empty value for --health-cmd/],
    [['--health-url', ' ', 'true'], {}, /^gsup: empty value for --health-url/],
    [['true'], { GSUP_HEALTH_CMD: '   ' }, /^gsup: empty value for GSUP_HEALTH_CMD/],
    [
      ['--health-url', 'http://[::1', 'true'],
      {},
      /^gsup: invalid URL "http:\/\/\[::1" for --health-url: expected http:\/\/host/,
    ],
    [
      ['--health-url', 'ftp://example.com/', 'true'],
      {},
      /^gsup: invalid URL "ftp:\/\/example.com\/" for --health-url: only http:\/\/ and https:\/\//,
    ],
    // A 100 kB bad value is quoted, not echoed whole.
    [
      ['-t', 'x'.repeat(100_000), 'true'],
      {},
      /^gsup: invalid duration "x{100}…" \(100000 characters\) for --kill-timeout: use e\.g\. 500ms/,
    ],
    [['--' + 'y'.repeat(100_000), 'true'], {}, /^gsup: unknown option '--y{200}.*… \(\d+ characters\)$/],
  ] as Array<[string[], NodeJS.ProcessEnv, RegExp]>)('gsup %j with env %j', async (args, env, message) => {
    const run = gsup(args, { env });
    expect((await run.finished()).code).toBe(125);
    expect(run.stderr).toHaveLength(1);
    expect(run.stderr[0]).toMatch(message);
    expect(run.stderr[0].length).toBeLessThan(400);
    expect(run.stdout).toEqual([]);
  });

  it('under --log-format json (or GSUP_LOG_FORMAT=json) a usage error is one JSON line, level error', async () => {
    const unit = 'a number needs a unit: 30s or 30000ms';
    const target = 'invalid value "nope" for --target: expected group, child, tree';
    const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
      [['--log-format', 'json', '--foo', 'true'], {}, "unknown option '--foo' (see gsup --help)"],
      [['--log-format', 'json', '-t', '30', 'true'], {}, `invalid duration "30" for --kill-timeout: ${unit}`],
      [['true'], { GSUP_LOG_FORMAT: 'json', GSUP_GRACE: '30' }, `invalid duration "30" for GSUP_GRACE: ${unit}`],
      [['--target', 'nope', 'true'], { GSUP_LOG_FORMAT: 'json' }, target],
    ];
    for (const [args, env, message] of cases) {
      const run = gsup(args, { env });
      expect((await run.finished()).code).toBe(125);
      expect(run.stderr).toHaveLength(1);
      const line = { time: expect.any(String), level: 'error', event: 'usage', message, exitCode: 125 };
      expect(JSON.parse(run.stderr[0])).toEqual(line);
    }
    // The flag wins over the variable, as for every option; a bad format itself is said in text.
    const text = gsup(['--log-format', 'text', '--foo', 'true'], { env: { GSUP_LOG_FORMAT: 'json' } });
    expect((await text.finished()).code).toBe(125);
    expect(text.stderr).toEqual(["gsup: unknown option '--foo' (see gsup --help)"]);
    const bad = gsup(['--log-format', 'xml', 'true']);
    expect((await bad.finished()).code).toBe(125);
    expect(bad.stderr[0]).toMatch(/^gsup: invalid value "xml" for --log-format/);
  });

  it('a flag wins over its variable', async () => {
    const run = gsup(['--target', 'group', '-t', '1s', '--', 'true'], {
      env: { GSUP_TARGET: 'nope', GSUP_KILL_TIMEOUT: '10x' },
    });
    expect((await run.finished()).code).toBe(0);
    expect(run.stderr).toEqual([]);
  });

  it('--help and --version print to stdout and exit 0', async () => {
    const help = gsup(['--help']);
    expect((await help.finished()).code).toBe(0);
    const text = help.stdout.join('\n');
    for (const flag of [
      '--kill-timeout',
      '--target',
      '--rewrite',
      '--stop-delay',
      '--on-exit',
      '--success-exit',
      '--restart',
      '--max-restarts',
      '--restart-delay',
      '--no-subreaper',
      '--no-pm2',
      '--verbose',
      '--quiet',
      '--log-format',
      '--health-cmd',
      '--health-url',
      '--health-file',
      '--health-max-age',
      '--health-interval',
      '--health-timeout',
      '--health-retries',
      '--health-start-period',
      '--health-start-interval',
      '--status-port',
      '--status-host',
      '--grace',
    ]) {
      expect(text).toContain(flag);
    }
    for (const variable of [
      'GSUP_KILL_TIMEOUT',
      'GSUP_TARGET',
      'GSUP_REWRITE',
      'GSUP_STOP_DELAY',
      'GSUP_ON_EXIT',
      'GSUP_SUCCESS_EXIT',
      'GSUP_RESTART',
      'GSUP_MAX_RESTARTS',
      'GSUP_RESTART_DELAY',
      'GSUP_SUBREAPER',
      'GSUP_PM2',
      'GSUP_VERBOSE',
      'GSUP_LOG_FORMAT',
      'GSUP_HEALTH_CMD',
      'GSUP_HEALTH_URL',
      'GSUP_HEALTH_FILE',
      'GSUP_HEALTH_MAX_AGE',
      'GSUP_HEALTH_INTERVAL',
      'GSUP_HEALTH_TIMEOUT',
      'GSUP_HEALTH_RETRIES',
      'GSUP_HEALTH_START_PERIOD',
      'GSUP_HEALTH_START_INTERVAL',
      'GSUP_STATUS_PORT',
      'GSUP_STATUS_HOST',
      'GSUP_GRACE',
    ]) {
      expect(text).toContain(variable);
    }
    // Three examples: Docker, npx tsx, pm2 start.
    expect(text).toContain('ENTRYPOINT ["gsup", "--"]');
    expect(text).toContain('gsup -- npx tsx src/index.ts');
    expect(text).toContain('gsup -- pm2 start app.js -i 2');
    for (const flag of ['--version', '-V']) {
      const version = gsup([flag]);
      expect((await version.finished()).code).toBe(0);
      expect(version.stdout[0]).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });
});
