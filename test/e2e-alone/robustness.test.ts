import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  GSUP,
  PRINTER,
  Run,
  fixture,
  gsup,
  gsupAsPid1,
  hostPidOfPid1,
  leftovers,
  markerPath,
  unshareWorks,
} from '../helpers/gsup.js';
import { allProcs, waitFor } from '../helpers/proc.js';

// Where an init must not break: floods of signals and of orphans, a reader
// of stderr that went away, signals at start-up, nested inits.

const FLOOD = fixture('flood.js');
const NAIVE = fixture('naive-forwarder.js');

/** The session of gsup's command (its first child): what the tree is made of, orphans included. */
async function commandSession(run: Run): Promise<number> {
  let sid: number | undefined;
  await waitFor(
    () => (sid = allProcs().find((proc) => proc.ppid === run.pid)?.sid) !== undefined,
    'the command to start',
  );
  return sid!;
}

function aliveInSession(sid: number): number[] {
  return allProcs()
    .filter((proc) => proc.sid === sid && proc.state !== 'Z')
    .map((proc) => proc.pid);
}

/** Has `pid` a handler for `signal` (its bit in SigCgt)? */
function catches(pid: number, signal: NodeJS.Signals): boolean {
  try {
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return caught !== undefined && (BigInt(`0x${caught}`) & (1n << BigInt(constants.signals[signal] - 1))) !== 0n;
  } catch {
    return false;
  }
}

/** Sends `count` signals as fast as this process can, then one more. */
function burst(pid: number, signal: NodeJS.Signals, count: number, then: NodeJS.Signals): number {
  for (let index = 0; index < count; index++) process.kill(pid, signal);
  process.kill(pid, then);
  return performance.now();
}

const exitedWithin = async (run: Run, ms: number) => {
  const exit = await run.finished(ms);
  return exit;
};

describe('an orphan flood', () => {
  // Orphans that live 100 ms, made as fast as a shell can; the shell ignores
  // SIGTERM, so only the kill timeout ends the flood.
  const ORPHANS = ['sh', '-c', `trap '' TERM; echo "ready (pid: $$, flood)"; while :; do (sleep 0.1 &); done`];

  it('not PID 1: SIGTERM after 2 s stops it within the kill timeout + 1 s, nothing survives', async () => {
    const run = gsup(['-t', '2s', '--', ...ORPHANS]);
    await run.ready('flood');
    const sid = await commandSession(run);
    await new Promise((resolve) => setTimeout(resolve, 2000)); // the flood runs for 2 s: the condition under test
    const sent = performance.now();
    run.signal('SIGTERM');
    const exit = await exitedWithin(run, 3000);
    expect(performance.now() - sent).toBeLessThan(3000);
    expect(exit.code).toBe(137); // sh was SIGKILLed at the kill timeout
    expect(aliveInSession(sid)).toEqual([]);
  });

  it.skipIf(!unshareWorks)('PID 1: the same', async () => {
    const run = gsupAsPid1(['-t', '2s', '--', ...ORPHANS]);
    await run.ready('flood');
    await waitFor(() => hostPidOfPid1(run) !== undefined, 'PID 1 to be seen from here');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const sent = performance.now();
    process.kill(hostPidOfPid1(run)!, 'SIGTERM');
    const exit = await exitedWithin(run, 3000);
    expect(performance.now() - sent).toBeLessThan(3000);
    expect(exit.code).toBe(137);
  });

  // A flood of orphans, alone (e2e-alone): the peak of zombies measures gsup's reaping, not a machine shared with other tests.
  it.skipIf(!unshareWorks)(
    'PID 1 reaps 10,000 short-lived orphans: never over 100 zombies at once, 0 at the end',
    async () => {
      const script =
        'i=0; while [ $i -lt 10000 ]; do (true &); i=$((i+1)); done; echo "made $i orphans"; sleep 0.2; ' +
        'echo "zombies: $(grep -l \'^[0-9]* ([^)]*) Z\' /proc/[0-9]*/stat 2>/dev/null | wc -l)"';
      const run = gsupAsPid1(['--', 'sh', '-c', script]);
      let gsupPid: number | undefined;
      await waitFor(() => (gsupPid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
      let most = 0;
      const sampler = setInterval(() => {
        const zombies = allProcs().filter((proc) => proc.ppid === gsupPid && proc.state === 'Z').length;
        most = Math.max(most, zombies);
      }, 5);
      try {
        // What is measured is zombies, not speed: this VM forks at ~9 ms a pair (77–91 s for the 10,000 idle, over 120 s with every core busy).
        const exit = await run.finished(300_000);
        expect(exit.code).toBe(0);
      } finally {
        clearInterval(sampler);
      }
      expect(run.stdout).toContain('made 10000 orphans');
      expect(run.stdout).toContain('zombies: 0');
      expect(most).toBeLessThanOrEqual(100);
    },
    360_000,
  );
});

describe('a signal flood', () => {
  it('2,000 SIGUSR1 then SIGTERM: the app gets the SIGTERM once and gsup stops about as fast as a bare Node forwarder', async () => {
    const times: Record<string, number> = {};
    for (const [name, command] of [
      ['naive', [process.execPath, NAIVE]],
      ['gsup', [process.execPath, GSUP, '--']],
    ] as const) {
      const run = new Run(command[0], [...command.slice(1), 'node', PRINTER, '--label', name]);
      await run.ready(name);
      const sent = burst(run.pid, 'SIGUSR1', 2000, 'SIGTERM');
      const exit = await run.finished(5000);
      times[name] = performance.now() - sent;
      expect(exit.code, run.transcript()).toBe(0);
      expect(run.count(/^signal: SIGTERM /)).toBe(1);
      expect(run.count(/^signal: SIGUSR1 /), `${name}: ${run.transcript()}`).toBeGreaterThan(0);
    }
    // Measured here: naive 10–40 ms, gsup 15–60 ms (before the loop: 360–1,390 ms).
    expect(times.gsup, JSON.stringify(times)).toBeLessThan(Math.max(4 * times.naive, 250));
  });

  it('30,000 SIGUSR1 then SIGTERM: the SIGTERM gets through every time (gsup widens Node’s signal pipe)', async () => {
    // A bare Node forwarder loses the SIGTERM in 3–4 tries of 10 here: libuv
    // drops a signal when its 4,096-signal pipe is full. gsup's holds 65,536.
    for (let attempt = 0; attempt < 3; attempt++) {
      const run = gsup(['--', 'node', PRINTER, '--label', `try${attempt}`]);
      await run.ready(`try${attempt}`);
      burst(run.pid, 'SIGUSR1', 30_000, 'SIGTERM');
      expect((await run.finished(5000)).code).toBe(0);
      expect(run.count(/^signal: SIGTERM /)).toBe(1);
    }
  });

  it('the command exits 7 while 10,000 signals a second arrive: gsup exits 7 within 1 s', async () => {
    // SIGWINCH: sh and sleep ignore it, so the command's own timing decides its exit.
    const run = gsup(['--', 'sh', '-c', 'echo "ready (pid: $$, sh)"; sleep 0.5; echo exiting; exit 7']);
    await run.ready('sh');
    const flood = spawn(process.execPath, [FLOOD, String(run.pid), 'SIGWINCH', '0', '10000'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      await run.waitForLine(/^exiting$/);
      const exiting = performance.now();
      const exit = await run.finished(5000);
      expect(exit.code).toBe(7);
      expect(performance.now() - exiting).toBeLessThan(1000);
    } finally {
      flood.kill('SIGKILL');
    }
  });
});

describe('a reader that went away', () => {
  it('-v with stderr closed: the app still gets SIGTERM (and no SIGPIPE), gsup exits with its status', async () => {
    const done = markerPath();
    const run = gsup(['-v', '--', 'node', PRINTER, '--cleanup', '100', '--marker', done]);
    await run.ready();
    run.child.stderr!.destroy(); // every log line from now on meets EPIPE
    run.signal('SIGUSR1'); // logged at -v: the first failed write
    await run.waitForLine(/^signal: SIGUSR1 /);
    run.signal('SIGTERM');
    const exit = await run.finished(5000);
    expect(exit.code).toBe(0);
    expect(existsSync(done)).toBe(true);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.count(/^signal: SIGPIPE /)).toBe(0);
  });
});

describe('signals at start-up', () => {
  // A stop signal this long after exec; before the spawn gsup must not start
  // the command and exit 128+N, after it the stop runs as usual.
  const label = () => `early${Math.random().toString(36).slice(2, 8)}`;
  const withLabel = (text: string) =>
    allProcs()
      .filter((proc) => proc.state !== 'Z')
      .filter((proc) => {
        try {
          return readFileSync(`/proc/${proc.pid}/cmdline`, 'latin1').includes(text);
        } catch {
          return false;
        }
      })
      .map((proc) => proc.pid);

  it.each([10, 30, 60, 100])('SIGTERM %i ms after exec: gsup gone within 2 s, nothing left', async (delay) => {
    const name = label();
    const run = gsup(['--', 'node', PRINTER, '--label', name]);
    await new Promise((resolve) => setTimeout(resolve, delay)); // the timing under test
    run.signal('SIGTERM');
    const exit = await run.finished(2000);
    // Killed by it before any handler ran, 143 before the spawn, or the app's own 0 after it.
    expect(exit.signal === 'SIGTERM' || exit.code === 143 || exit.code === 0, JSON.stringify(exit)).toBe(true);
    expect(withLabel(name)).toEqual([]);
  });

  it.skipIf(!unshareWorks).each([10, 30, 60, 100])(
    'as PID 1, SIGTERM %i ms after it can be caught: gsup gone within 2 s, nothing left',
    async (delay) => {
      const name = label();
      const run = gsupAsPid1(['--', 'node', PRINTER, '--label', name]);
      let pid1: number | undefined;
      await waitFor(() => (pid1 = hostPidOfPid1(run)) !== undefined, 'PID 1 to be forked', 2000);
      // The clock starts when PID 1 can catch SIGTERM at all (Node's own start-up handler is in:
      // its bit in SigCgt). Before that the kernel drops a SIGTERM to a namespace's init without
      // a trace, for any program — gsup, tini or dumb-init alike.
      await waitFor(() => catches(pid1!, 'SIGTERM'), 'PID 1 to have a SIGTERM handler', 5000);
      await new Promise((resolve) => setTimeout(resolve, delay));
      process.kill(pid1!, 'SIGTERM');
      const exit = await run.finished(2000);
      expect(exit.code === 143 || exit.code === 0, JSON.stringify(exit)).toBe(true);
      expect(withLabel(name)).toEqual([]);
    },
  );

  // Issue 35, 5c: the milliseconds between gsup's first line and its inbox (its own modules loading), held open on
  // purpose (a preload of the test's holds them 1.5 s) and a reload signal sent into them: caught by the handlers
  // bin/gsup.cjs installs first, never gsup's end by SIGHUP's default action (129). Node hands it to JS at its loop's
  // next turn: before the first spawn it is dropped, after it (the start ran on without a turn) it is a reload.
  it('SIGHUP while gsup loads its own modules (held open): caught, never its end; gsup exits with the command', async () => {
    const name = label();
    const hold = { node: ['--require', fixture('hold-start.cjs')] };
    const run = gsup(['--wait-ready', '--reload-signal', 'HUP', '--', 'node', PRINTER, '--label', name], hold);
    await run.waitForLine(/^gsup: \(test\) gsup's own modules loading$/, { stream: 'stderr', timeoutMs: 10_000 });
    run.signal('SIGHUP');
    const [, taken] = await run.waitForLine(/SIGHUP received: (dropped|reloading)/, {
      stream: 'stderr',
      timeoutMs: 10_000,
    });
    // Before the SIGTERM, the current run's handler must be in, else it may die of it and gsup rightly says 143.
    // Dropped: run 1's printer ready. A reload: run 2 ready (gsup says so), which retires run 1 then (with its
    // SIGTERM, maybe before run 1 printed anything: its end is no part of gsup's status).
    if (taken === 'reloading') await run.waitForLine(/run 2 is ready/, { stream: 'stderr', timeoutMs: 20_000 });
    else
      await waitFor(() => run.count(new RegExp(`^ready \\(pid: \\d+, ${name}\\)$`)) >= 1, 'the printer ready', 20_000);
    run.signal('SIGTERM');
    expect(await run.finished(10_000), run.transcript()).toEqual({ code: 0, signal: null });
    const said = run.stderr.filter((line) => line.includes('SIGHUP'));
    expect(said, run.transcript()).toHaveLength(1);
    expect(said[0]).toMatch(
      /^\[gsup\] SIGHUP received: (dropped \(the command has not started yet\)|reloading: run 2 starts beside run 1,)/,
    );
    expect(withLabel(name)).toEqual([]);
  });

  // The window between seeing whether Node's start-up handler took a stop
  // signal and gsup's own handler going in, held open on purpose (a preload of
  // the test's holds it 1.5 s, as if gsup were preempted there) and a SIGTERM sent into it.
  const intoTheWindow = async (env: NodeJS.ProcessEnv, flags: string[] = []) => {
    const name = label();
    const hold = { env, node: ['--require', fixture('hold-handover.cjs')] };
    const run = gsupAsPid1(['-v', ...flags, '--', 'node', PRINTER, '--label', name], hold);
    await run.waitForLine(/^gsup: \(test\) stop handlers being handed over$/, { stream: 'stderr', timeoutMs: 10_000 });
    const pid1 = hostPidOfPid1(run);
    expect(pid1).toBeDefined();
    process.kill(pid1!, 'SIGTERM');
    return { run, name };
  };

  it.skipIf(!unshareWorks)(
    'as PID 1, a SIGTERM while the stop handlers are handed over (held open) is not lost: the command is never started, 143',
    async () => {
      const { run, name } = await intoTheWindow({});
      const exit = await run.finished(10_000);
      expect(exit.code, run.transcript()).toBe(143);
      expect(run.stderr.join('\n')).toMatch(/SIGTERM received before the command started: not starting it/);
      expect(run.count(/^ready /), run.transcript()).toBe(0);
      expect(withLabel(name)).toEqual([]);
    },
  );

  it.skipIf(!unshareWorks)(
    'as PID 1 with -r TERM:USR1, the same SIGTERM is no stop signal: the command starts, and gets SIGUSR1',
    async () => {
      const { run, name } = await intoTheWindow({}, ['-r', 'TERM:USR1']);
      const hostPid = hostPidOfPid1(run)!;
      await run.waitForLine(/\] SIGTERM \(as SIGUSR1\) → group \d+/, { stream: 'stderr' });
      try {
        process.kill(hostPid, 'SIGINT');
      } catch {
        // gone already: the SIGUSR1 came before node had a handler for it, and killed it, as it would any process
      }
      const exit = await run.finished(10_000);
      // The app's own end on SIGINT, or (when a signal came before node had set a handler for it) 128+N.
      expect([0, 130, 138], run.transcript()).toContain(exit.code);
      expect(run.stderr.join('\n')).not.toMatch(/before the command started/);
      expect(withLabel(name)).toEqual([]);
    },
  );

  // Without koffi there is no atomic hand-over: docs/limits.md says a SIGTERM in this window may be lost. What the
  // spec promises is asserted either way, so that a fallback that keeps it passes too: kept, the command never starts
  // and gsup exits 143 (a stop signal before the spawn); lost, gsup is not deaf after it: the command starts, gets no
  // signal, and the next SIGTERM reaches it once and stops the tree.
  it.skipIf(!unshareWorks)(
    'as PID 1 without koffi (GSUP_FFI=0), the same SIGTERM is kept (143, no start) or lost (docs/limits.md), never more: the next SIGTERM stops the tree',
    async () => {
      const { run, name } = await intoTheWindow({ GSUP_FFI: '0' });
      const started = await run.ready(name).then(
        () => true,
        () => false,
      );
      if (!started) {
        const exit = await run.finished(10_000);
        expect(exit.code, run.transcript()).toBe(143);
        expect(run.stderr.join('\n')).toMatch(/SIGTERM received before the command started: not starting it/);
      } else {
        const hostPid = hostPidOfPid1(run)!;
        expect(run.count(/^signal: /), run.transcript()).toBe(0);
        process.kill(hostPid, 'SIGTERM');
        const exit = await run.finished(10_000);
        expect(exit.code, run.transcript()).toBe(0);
        expect(run.count(/^signal: SIGTERM /), run.transcript()).toBe(1);
      }
      expect(withLabel(name)).toEqual([]);
    },
  );
});

describe('nested inits', () => {
  const has = (tool: string) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  const app = ['node', PRINTER, '--cleanup', '100'];
  const chains: Array<[string, string[], boolean]> = [
    ['gsup -- gsup -- app', [process.execPath, GSUP, '--', process.execPath, GSUP, '--', ...app], true],
    ['gsup -- tini -s -g -- app', [process.execPath, GSUP, '--', 'tini', '-s', '-g', '--', ...app], has('tini')],
    ['gsup -- dumb-init -- app', [process.execPath, GSUP, '--', 'dumb-init', '--', ...app], has('dumb-init')],
    ['tini -s -g -- gsup -- app', ['tini', '-s', '-g', '--', process.execPath, GSUP, '--', ...app], has('tini')],
    ['dumb-init -- gsup -- app', ['dumb-init', '--', process.execPath, GSUP, '--', ...app], has('dumb-init')],
  ];
  for (const [name, command, available] of chains) {
    it.skipIf(!available)(
      `${name}: SIGUSR1, then SIGTERM to the outer one: the app gets each exactly once${available ? '' : ' (skipped: not installed)'}`,
      async () => {
        const run = new Run(command[0], command.slice(1));
        await run.ready();
        process.kill(run.pid, 'SIGUSR1');
        await run.waitForLine(/^signal: SIGUSR1 /);
        process.kill(run.pid, 'SIGTERM');
        const exit = await run.finished(5000);
        expect(exit.code, run.transcript()).toBe(0);
        expect(run.count(/^signal: SIGUSR1 /), run.transcript()).toBe(1);
        expect(run.count(/^signal: SIGTERM /), run.transcript()).toBe(1);
        expect(run.count(/^clean exit /)).toBe(1);
        expect(leftovers(run)).toEqual([]);
      },
    );
  }
});
