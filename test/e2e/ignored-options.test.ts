import { describe, expect, it } from 'vitest';
import { gsup } from '../helpers/gsup.js';

// An option that does nothing without another is named once, in one warning
// at start, and changes nothing else: the command runs, gsup exits with its
// status. (The rule and its table: src/options/needs.ts.)

// The flag, its variable, a value, and words of what it needs.
const IGNORED: Array<[string, string, string, string]> = [
  ['--health-interval', 'GSUP_HEALTH_INTERVAL', '5s', 'a health check'],
  ['--health-timeout', 'GSUP_HEALTH_TIMEOUT', '2s', 'a health check'],
  ['--health-retries', 'GSUP_HEALTH_RETRIES', '5', 'a health check'],
  ['--health-start-period', 'GSUP_HEALTH_START_PERIOD', '10s', 'a health check'],
  ['--health-start-interval', 'GSUP_HEALTH_START_INTERVAL', '1s', 'a health check'],
  ['--health-max-age', 'GSUP_HEALTH_MAX_AGE', '1m', '--health-file'],
  ['--max-restarts', 'GSUP_MAX_RESTARTS', '3', '--restart on-failure or always'],
  ['--restart-delay', 'GSUP_RESTART_DELAY', '100ms', '--restart on-failure or always'],
  ['--status-host', 'GSUP_STATUS_HOST', '127.0.0.1', '--status-port'],
  // Shorter than the command's life: it would fail the start if it were taken.
  ['--ready-timeout', 'GSUP_READY_TIMEOUT', '100ms', '--wait-ready'],
];

// Lives past the ready timeout above, then exits 3: gsup must exit 3, after one run.
const COMMAND = ['sh', '-c', 'sleep 0.5; echo ran; exit 3'];

const escape = (text: string) => text.replace(/[.*+?^$()[\]{}|\\]/g, '\\$&');

describe('an option that does nothing alone: one warning naming it, nothing else changed', () => {
  it.each(IGNORED)('%s alone: one line, the exit status the command gave', async (flag, _variable, value, needs) => {
    const run = gsup([flag, value, '--', ...COMMAND]);
    expect((await run.finished()).code).toBe(3);
    expect(run.stdout).toEqual(['ran']);
    const line = new RegExp(`^\\[gsup\\] ${escape(flag)} does nothing without ${escape(needs)}.*: ignored$`);
    expect(run.stderr).toEqual([expect.stringMatching(line)]);
  });

  it('every variable at once: each named once, by its variable, in one line each; the exit status unchanged', async () => {
    const env = Object.fromEntries(IGNORED.map(([, variable, value]) => [variable, value]));
    const run = gsup(['--', ...COMMAND], { env });
    expect((await run.finished()).code).toBe(3);
    expect(run.stdout).toEqual(['ran']);
    expect(run.stderr).toHaveLength(IGNORED.length);
    for (const [, variable, , needs] of IGNORED) {
      const lines = run.stderr.filter((line) => line.includes(variable));
      expect(lines, variable).toEqual([
        expect.stringMatching(`^\\[gsup\\] ${variable} does nothing without ${escape(needs)}`),
      ]);
    }
  });

  it('with what it needs, no warning', async () => {
    const run = gsup(['--restart', 'on-failure', '--max-restarts', '0', '--restart-delay', '100ms', '--', ...COMMAND]);
    expect((await run.finished()).code).toBe(3);
    expect(run.stderr.filter((line) => line.includes('does nothing'))).toEqual([]);
  });

  it('under --log-format json: one JSON warning per option, naming it and what it needs', async () => {
    const run = gsup(['--log-format', 'json', '--status-host', '::1', '--', ...COMMAND], {
      env: { GSUP_MAX_RESTARTS: '2' },
    });
    expect((await run.finished()).code).toBe(3);
    expect(run.stderr.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'warn', event: 'ignored-option', option: 'GSUP_MAX_RESTARTS' }),
      expect.objectContaining({
        level: 'warn',
        event: 'ignored-option',
        option: '--status-host',
        needs: '--status-port',
      }),
    ]);
  });
});
