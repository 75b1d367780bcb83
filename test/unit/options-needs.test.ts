import { describe, expect, it } from 'vitest';
import { parseCommandLine, type CliOptions } from '../../src/options/cli-options.js';
import { UsageError } from '../../src/options/errors.js';
import { NEEDS } from '../../src/options/needs.js';

const parse = async (argv: string[], env: NodeJS.ProcessEnv = {}): Promise<CliOptions> => {
  const request = await parseCommandLine(argv, env, '1.2.3', () => {});
  if (request.kind !== 'run') throw new Error('expected a run');
  return request.options;
};

// Each option that does nothing alone: a value for it, and what it needs (the flags that make it do something).
const CASES: Record<string, { value: string; with: string[]; needs: string }> = {
  '--health-interval': { value: '5s', with: ['--health-cmd', 'true'], needs: 'a health check' },
  '--health-timeout': { value: '2s', with: ['--health-url', 'http://127.0.0.1:1/'], needs: 'a health check' },
  '--health-retries': { value: '5', with: ['--health-file', '/tmp/beat'], needs: 'a health check' },
  '--health-start-period': { value: '10s', with: ['--health-cmd', 'true'], needs: 'a health check' },
  '--health-start-interval': { value: '1s', with: ['--health-cmd', 'true'], needs: 'a health check' },
  '--health-max-age': { value: '1m', with: ['--health-file', '/tmp/beat'], needs: '--health-file' },
  '--max-restarts': { value: '3', with: ['--restart', 'on-failure'], needs: '--restart on-failure or always' },
  '--restart-delay': { value: '2s', with: ['--restart', 'always'], needs: '--restart on-failure or always' },
  '--status-host': { value: '127.0.0.1', with: ['--status-port', '9100'], needs: '--status-port' },
  '--ready-timeout': { value: '5s', with: ['--wait-ready'], needs: '--wait-ready' },
  '--reload-drain': {
    value: '2s',
    with: ['--listen', '127.0.0.1:8080', '--reload-signal', 'HUP'],
    needs: '--reload-signal',
  },
};

describe('options that do nothing without another (src/options/needs.ts)', () => {
  it('every row of the table is tried here, and every option tried is a row', () => {
    expect(NEEDS.map((need) => need.option[1]).sort()).toEqual(Object.keys(CASES).sort());
  });

  it.each(NEEDS.map((need) => need.option))(
    '%s: alone, named once (flag or variable, the flag when both); with what it needs, silent',
    async (_key, flag, variable) => {
      const { value, with: needed, needs } = CASES[flag];
      const alone = await parse([flag, value, 'x']);
      expect(alone.ignored).toEqual([
        {
          option: flag,
          needs: expect.stringContaining(needs),
          message: expect.stringMatching(`^${flag} does nothing`),
        },
      ]);
      expect(alone.ignored[0].message).toBe(`${flag} does nothing without ${alone.ignored[0].needs}: ignored`);
      expect((await parse(['x'], { [variable]: value })).ignored.map((each) => each.option)).toEqual([variable]);
      const both = await parse([flag, value, 'x'], { [variable]: value });
      expect(both.ignored.map((each) => each.option)).toEqual([flag]);
      expect((await parse([...needed, flag, value, 'x'])).ignored).toEqual([]);
      expect((await parse([...needed, 'x'], { [variable]: value })).ignored).toEqual([]);
    },
  );

  it('a value that does nothing is still checked', async () => {
    await expect(parse(['--health-interval', '30', 'x'])).rejects.toThrow(UsageError);
    await expect(parse(['x'], { GSUP_MAX_RESTARTS: 'many' })).rejects.toThrow('for GSUP_MAX_RESTARTS');
    await expect(parse(['--ready-timeout', '0s', 'x'])).rejects.toThrow('must be above 0');
  });

  it('--ready-timeout without --wait-ready reaches the engine unset (it refuses a timeout with no word awaited)', async () => {
    expect(await parse(['--ready-timeout', '5s', 'x'])).toMatchObject({ readyTimeout: undefined, waitReady: false });
    expect(await parse(['--wait-ready', '--ready-timeout', '5s', 'x'])).toMatchObject({ readyTimeout: 5000 });
  });

  it("--ready-timeout with --reload-signal alone is a reload's ready timeout: it does something, said nothing of", async () => {
    const reload = ['--listen', '8080', '--reload-signal', 'HUP', '--ready-timeout', '5s', 'x'];
    expect(await parse(reload)).toMatchObject({ readyTimeout: 5000, waitReady: false, ignored: [] });
    const env = { GSUP_LISTEN: '8080', GSUP_RELOAD_SIGNAL: 'HUP', GSUP_READY_TIMEOUT: '5s' };
    expect(await parse(['x'], env)).toMatchObject({ readyTimeout: 5000, ignored: [] });
    const alone = await parse(['--ready-timeout', '5s', 'x']);
    expect(alone.ignored[0].message).toBe(
      '--ready-timeout does nothing without --wait-ready or --reload-signal: ignored',
    );
  });

  it('several at once: each named once, in the table order', async () => {
    const options = await parse(['--status-host', '::1', '--health-timeout', '1s', 'x'], {
      GSUP_HEALTH_INTERVAL: '1s',
      GSUP_MAX_RESTARTS: '2',
    });
    expect(options.ignored.map((each) => each.option)).toEqual([
      'GSUP_HEALTH_INTERVAL',
      '--health-timeout',
      'GSUP_MAX_RESTARTS',
      '--status-host',
    ]);
  });

  it('--restart never, said explicitly, leaves --max-restarts doing nothing too', async () => {
    const options = await parse(['--restart', 'never', '--max-restarts', '3', 'x']);
    expect(options.ignored.map((each) => each.option)).toEqual(['--max-restarts']);
  });
});

describe('counts are checked as numbers, naming the flag or variable', () => {
  const over = '99999999999999999999';
  it.each([
    [['--max-restarts', over, 'x'], {}, '--max-restarts'],
    [['x'], { GSUP_MAX_RESTARTS: over }, 'GSUP_MAX_RESTARTS'],
    [['--health-cmd', 'true', '--health-retries', over, 'x'], {}, '--health-retries'],
    [['--health-cmd', 'true', 'x'], { GSUP_HEALTH_RETRIES: over }, 'GSUP_HEALTH_RETRIES'],
    // Checked even where it does nothing.
    [['x'], { GSUP_HEALTH_RETRIES: over }, 'GSUP_HEALTH_RETRIES'],
  ])('%j %j: a usage error naming %s and the value', async (argv, env, name) => {
    await expect(parse(argv, env)).rejects.toThrow(
      new UsageError(`invalid number "${over}" for ${name}: at most 9007199254740991`),
    );
  });

  it('up to 2^53−1 is taken; one more is not', async () => {
    const most = String(Number.MAX_SAFE_INTEGER);
    expect((await parse(['--restart', 'always', '--max-restarts', most, 'x'])).maxRestarts).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    await expect(parse(['--max-restarts', '9007199254740992', 'x'])).rejects.toThrow('at most 9007199254740991');
    await expect(parse(['--max-restarts', '-1', 'x'])).rejects.toThrow('expected a whole number');
    await expect(parse(['--max-restarts', '1e3', 'x'])).rejects.toThrow('expected a whole number');
    await expect(parse(['--health-cmd', 'true', '--health-retries', '0', 'x'])).rejects.toThrow('must be above 0');
  });
});
