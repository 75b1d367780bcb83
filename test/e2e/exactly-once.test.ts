import { describe, expect, it } from 'vitest';
import { supervise } from '../../src/engine/shell/supervisor.js';
import { posixPlatform } from '../../src/platform/posix/platform.js';
import { PRINTER, gsup, leftovers } from '../helpers/gsup.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// Every signal gsup forwards, but the stop signals and job control (tested apart).
const FORWARDED = [
  'SIGHUP',
  'SIGQUIT',
  'SIGTRAP',
  'SIGUSR1',
  'SIGUSR2',
  'SIGPIPE',
  'SIGALRM',
  'SIGWINCH',
  'SIGURG',
  'SIGVTALRM',
  'SIGPROF',
  'SIGXCPU',
  'SIGIO',
  'SIGPWR',
  'SIGSYS',
  'SIGCONT',
] as const;

// The shell layer of `sh -c 'app; true'` must survive the signals it gets too.
const TRAPPED = 'HUP QUIT TRAP USR1 USR2 PIPE ALRM VTALRM PROF XCPU IO PWR SYS';
const SHELL = `trap '' ${TRAPPED}; node ${PRINTER}; true`;

describe.each([
  // group: one kill(-pgid) reaches sh and the app, each once.
  { target: 'group', command: ['sh', '-c', SHELL], appGets: true },
  // tree: sh and the app, each by pid, each once.
  { target: 'tree', command: ['sh', '-c', SHELL], appGets: true },
  // child: only the direct child, here sh: the app gets nothing.
  { target: 'child', command: ['sh', '-c', SHELL], appGets: false },
  // child, with the app as the direct child: it gets each signal once.
  { target: 'child', command: ['node', PRINTER], appGets: true },
])('--target $target, $command.0 as the command', ({ target, command, appGets }) => {
  it('delivers each forwarded signal to the app exactly once (or not at all to a grandchild in child mode)', async () => {
    const run = gsup(['-v', '--target', target, '--', ...command]);
    await run.ready();
    for (const signal of FORWARDED) {
      run.signal(signal);
      if (appGets) await run.waitForLine(new RegExp(`^signal: ${signal} `));
      else await run.waitForLine(new RegExp(`\\] ${signal} → pid \\d+$`), { stream: 'stderr' });
    }
    run.signal('SIGTERM');
    await run.finished();
    for (const signal of FORWARDED) {
      expect(run.count(new RegExp(`^signal: ${signal} `)), signal).toBe(appGets ? 1 : 0);
    }
    // The stop reaches the app once in every mode: directly, or (child mode, sh
    // gone) as the stop of what sh left behind.
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.count(/^clean exit/)).toBe(1);
    expect(leftovers(run)).toEqual([]);
  });
});

describe('the default target (group)', () => {
  it('signals the process group once: one kill(2) for sh and the app', async () => {
    const run = gsup(['-v', '--', 'sh', '-c', SHELL]);
    await run.ready();
    run.signal('SIGUSR2');
    await run.waitForLine(/^signal: SIGUSR2 /);
    await run.waitForLine(/SIGUSR2 → group \d+$/, { stream: 'stderr' });
    run.signal('SIGINT');
    const exit = await run.finished();
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    expect(run.count(/^signal: SIGUSR2 /)).toBe(1);
    // sh dies of SIGINT: gsup exits as it did, 128+2.
    expect(exit.code).toBe(130);
  });

  it('works with the ps-based platform as well (no /proc): given to the engine by the test, no variable switches it', async () => {
    // The engine itself (no CLI), as the library runs it: no test hook in what users run.
    const handle = supervise('sh', ['-c', SHELL], { platform: posixPlatform, stdio: 'pipe' });
    const lines: string[] = [];
    const seen = (pattern: RegExp) =>
      waitFor(() => lines.some((line) => pattern.test(line)), `a line matching ${pattern}`);
    handle.stdout!.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
    try {
      await seen(/^ready /);
      handle.signal('SIGUSR1');
      await seen(/^signal: SIGUSR1 /);
      await handle.stop();
      expect(lines.filter((line) => /^signal: SIGUSR1 /.test(line))).toHaveLength(1);
      expect(lines.filter((line) => /^signal: SIGTERM /.test(line))).toHaveLength(1);
    } finally {
      if (handle.pid && isAlive(handle.pid)) process.kill(-handle.pid, 'SIGKILL');
    }
  });
});
