import { describe, expect, it } from 'vitest';
import { fixture, gsup, leftovers } from '../helpers/gsup.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// The spawner starts a printer in its own process group, waits until it is
// ready, and exits with the given code, leaving it behind.
const leaveBehind = (code: number, ...extra: string[]) => [
  'node',
  fixture('spawner.js'),
  '--then',
  `exit:${code}`,
  ...extra,
];

describe('when the command exits by itself', () => {
  it.each([
    ['auto', 3],
    ['auto', 0],
    ['stop', 0],
  ])(
    '--on-exit %s stops what is left in its group with SIGTERM, then exits with the command’s status (%i)',
    async (policy, code) => {
      const run = gsup(['--on-exit', policy, '--', ...leaveBehind(code)]);
      const app = await run.ready('child0');
      const exit = await run.finished();
      expect(exit.code).toBe(code);
      expect(run.count(/^signal: SIGTERM .*child0/)).toBe(1);
      expect(run.count(/^clean exit .*child0/)).toBe(1);
      expect(isAlive(app)).toBe(false);
      expect(run.stderr.join('\n')).toMatch(
        /command exited \(code \d+\) leaving 1 process\(es\): stopping the tree with SIGTERM/,
      );
    },
  );

  it('--on-exit wait waits for what is left, forwarding signals to it', async () => {
    const run = gsup(['--on-exit', 'wait', '--', ...leaveBehind(5)]);
    await run.ready('child0');
    await run.waitForLine(/waiting for 1 remaining process/, { stream: 'stderr' });
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 .*child0/);
    expect(run.exit).toBeUndefined();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(5);
    expect(run.count(/^signal: SIGTERM .*child0/)).toBe(1);
    expect(leftovers(run)).toEqual([]);
  });

  it('--on-exit exit leaves them and exits at once', async () => {
    const run = gsup(['--on-exit', 'exit', '--', ...leaveBehind(4)]);
    const app = await run.ready('child0');
    expect((await run.finished()).code).toBe(4);
    expect(isAlive(app)).toBe(true);
    expect(run.count(/^signal: /)).toBe(0);
    // Left by design: this test ends it, so that the clean-up can assert nothing else survived.
    process.kill(app, 'SIGKILL');
    await waitFor(() => !isAlive(app), 'the app left behind to be gone');
  });
});
