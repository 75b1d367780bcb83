import { describe, expect, it } from 'vitest';
import { catchRealTime, settleStart } from '../../../src/engine/shell/start-steps.js';
import { Logger } from '../../../src/output/log.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

// What start-up leaves until the command runs (the loop's first turn): by then the command runs, so a step that
// throws is said and skipped, never gsup's end (which would leave the command unsupervised).

describe('settleStart', () => {
  it('a step that throws (no fd left) is said once and skipped; the others still run', async () => {
    // Linux's steps, failing as they do with no fd left.
    const platform = Object.assign(new FakePlatform(), {
      checkIdentity: (): never => {
        throw new Error('EMFILE: too many open files, pidfd_open');
      },
      widenSignalPipe: (): never => {
        throw new Error("EMFILE: too many open files, scandir '/proc/self/fd'");
      },
    });
    platform.add({ pid: process.pid, ppid: 1, pgid: 77, sid: 77 });
    const lines: string[] = [];
    const logger = new Logger({ verbosity: 0, write: (line) => lines.push(line.trim()) });
    let found = 0;
    let group: number | undefined;
    const settle = () =>
      settleStart(
        platform,
        logger,
        { findCli: () => found++ },
        (pgid) => (group = pgid),
        () => {},
      );
    expect(settle).not.toThrow();
    expect(found).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(group).toBe(77);
    expect(lines).toEqual([
      '[gsup] the pidfd check skipped: EMFILE: too many open files, pidfd_open',
      "[gsup] the signal pipe's widening skipped: EMFILE: too many open files, scandir '/proc/self/fd'",
    ]);
  });
});

describe('catchRealTime', () => {
  it('says each real-time signal once, by its number, and what was caught at -vv', () => {
    let caught: ((signo: number) => void) | undefined;
    const platform = Object.assign(new FakePlatform(), {
      catchRealTimeSignals: (listener: (signo: number) => void) => ((caught = listener), [34, 35, 64]),
    });
    const lines: string[] = [];
    catchRealTime(platform, new Logger({ verbosity: 2, write: (line) => lines.push(line.trim()) }));
    caught!(40);
    caught!(40);
    caught!(41);
    expect(lines).toEqual([
      '[gsup] real-time signals 34-64 caught',
      '[gsup] signal 40 (a real-time signal) is not forwarded: gsup forwards signals 1-31, and runs on',
      '[gsup] signal 41 (a real-time signal) is not forwarded: gsup forwards signals 1-31, and runs on',
    ]);
  });
});
