import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SpawnFunction } from '../../../src/engine/children/spawn.js';
import type { SuperviseOptions } from '../../../src/engine/shell/supervisor.js';
import { Logger } from '../../../src/output/log.js';
import type { SignalName } from '../../../src/platform/index.js';
import type { FakePlatform } from '../../helpers/fake-platform.js';
import { GSUP, killsOf, shellSetup } from '../../helpers/shell.js';
import type { CommandExit } from '../../../src/engine/machine/values.js';
import { AFTER_START_MS } from '../../../src/engine/shell/start-steps.js';

// The shell (supervise) with an injected platform and spawn (test/helpers/shell.ts): no real process, no real signal.
// The loop's scenarios run on a fake clock (an in-memory process table, a fake SIGCHLD, fake timers: every phase
// change, no sleep), each with its golden transcript; the supervise() tests at the end run on the real clock.

/** The loop's scenarios: fake timers, so that time passes only when a test says so. */
const onFakeClock = () => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date', 'performance', 'hrtime'],
  });
};
afterEach(async (context) => {
  // The golden transcript of each scenario: what was signalled (or refused), logged and returned.
  // Recorded before the engine was reshaped into a pure step; the same after.
  const recorded = transcript;
  transcript = undefined;
  if (recorded && context.task.result?.state === 'pass') {
    const result = await Promise.race([recorded.result, Promise.resolve('(still running)')]);
    expect({
      kills: runs(recorded.platform.kills.map(({ pid, signal }) => `${signal} ${pid === GSUP ? 'gsup' : pid}`)),
      refused: recorded.platform.refused.map(({ pid, signal }) => `${signal} ${pid}`),
      log: recorded.lines.map((line) => line.replace(/\d+(\.\d+)?(ms|s)\b/g, 'N')),
      result,
    }).toMatchSnapshot();
  }
  vi.useRealTimers();
});

/** Repeats in a row as one entry: `SIGKILL -500 ×4999`. */
function runs(entries: string[]): string[] {
  const out: Array<[string, number]> = [];
  for (const entry of entries) {
    const last = out.at(-1);
    if (last && last[0] === entry) last[1]++;
    else out.push([entry, 1]);
  }
  return out.map(([entry, count]) => (count > 1 ? `${entry} ×${count}` : entry));
}

/** What the current scenario did, for its golden transcript. */
let transcript: { platform: FakePlatform; lines: string[]; result: Promise<unknown> } | undefined;

/** Lets the loop handle what is queued, and time pass. */
const advance = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

/** Until the command's line (read ahead once it has run a while, off the loop) is known: a forward then goes at once. */
async function untilLineRead(platform: FakePlatform, pid = 500): Promise<void> {
  await advance(AFTER_START_MS);
  for (let turn = 0; turn < 50 && !platform.linesRead.has(pid); turn++) await advance();
  expect(platform.linesRead.has(pid)).toBe(true);
  await advance(); // its answer, taken in
}

/** A scenario of the loop: the shared set-up, its run recorded for the golden transcript. */
function setup(options?: { reaping?: boolean }) {
  const world = shellSetup(options);
  const start = (superviseOptions: SuperviseOptions = {}) => {
    const handle = world.start(superviseOptions);
    transcript = { platform: world.platform, lines: world.lines, result: handle.exited };
    return handle;
  };
  return { ...world, start };
}

describe('the loop, phase by phase', () => {
  beforeEach(onFakeClock);

  it('running: a forwarded signal goes to the command’s group at once, before any look at the tree', async () => {
    const { platform, start } = setup({ reaping: true });
    const handle = start();
    await untilLineRead(platform); // the command's line, read off the loop at its spawn: it is no pm2 manager
    handle.signal('SIGHUP');
    await advance();
    expect(killsOf(platform, 'SIGHUP')).toEqual([-500]);
    // As subreaper with no orphan of the tree among its children, nothing else can be a root: no look at all.
    expect(platform.looks).toBe(0);
    handle.stop();
    await advance(100);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it('the way to stderr is found once the command has run a while, not before, nor at the run’s last line', async () => {
    const ready = vi.spyOn(Logger.prototype, 'ready');
    try {
      const { platform, start } = setup({ reaping: true });
      const handle = start();
      await advance(AFTER_START_MS - 1);
      expect(ready).not.toHaveBeenCalled();
      await untilLineRead(platform);
      expect(ready).toHaveBeenCalledTimes(1);
      handle.stop();
      await advance(100);
      expect((await handle.exited).exitCode).toBe(143);
    } finally {
      ready.mockRestore();
    }
  });

  it('the real-time signals are caught by the CLI (an inbox) once the command has run a while; never by a library', async () => {
    for (const cli of [false, true]) {
      const { platform, start } = shellSetup({ reaping: true });
      const caught = vi.fn(() => [34, 64]);
      Object.assign(platform, { catchRealTimeSignals: caught });
      const handle = start(cli ? { inbox: { attach: () => {} } } : {});
      await advance(AFTER_START_MS - 1);
      expect(caught).not.toHaveBeenCalled();
      await untilLineRead(platform);
      // A library's host keeps its own signals: an RT handler of gsup's would take one meant for the host.
      expect(caught).toHaveBeenCalledTimes(cli ? 1 : 0);
      handle.stop();
      await advance(100);
      expect((await handle.exited).exitCode).toBe(143);
    }
  });

  it('running, as subreaper: an orphan still in the command’s group had the signal with it (no look); one outside it gets it after a look', async () => {
    const { platform, start } = setup({ reaping: true });
    const handle = start();
    await untilLineRead(platform);
    platform.add({ pid: 510, ppid: GSUP, pgid: 500, sid: 500 }); // a background job of the command, orphaned
    handle.signal('SIGHUP');
    await advance();
    expect(killsOf(platform, 'SIGHUP')).toEqual([-500]);
    expect(platform.looks).toBe(0);
    platform.add({ pid: 520, ppid: GSUP, pgid: 520, sid: 520 }); // a daemon: a session of its own, orphaned
    await advance(100); // the last answer (no other root) is past its 50 ms
    handle.signal('SIGHUP');
    await advance(100);
    expect(killsOf(platform, 'SIGHUP')).toEqual([-500, -500, -520]);
    expect(platform.looks).toBe(1);
    handle.stop();
    await advance(100);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it('running → stopping → done: one look, the stop signal to the roots once, then the command’s status', async () => {
    const { platform, start, lines } = setup();
    const handle = start();
    handle.signal('SIGTERM');
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500]);
    expect(await handle.exited).toEqual({ exitCode: 143, code: null, signal: 'SIGTERM', killed: false });
    expect(lines.some((line) => /stopped in \d+ms: 2 exited by themselves, 0 killed/.test(line))).toBe(true);
    // The command's exit is said once, with its status; the tree's look does not say it again.
    const left = lines.filter((line) => /\bpid (\d+, )*500\b.*left the tree/.test(line));
    expect(left).toEqual(['[gsup] pid 500 left the tree: the command exited (signal SIGTERM)']);
  });

  it('stopping → killing at the kill timeout: SIGKILL until nothing is left, exit 137', async () => {
    const { platform, start, ignoreStop } = setup();
    ignoreStop();
    const handle = start({ killTimeout: 1000 });
    handle.signal('SIGTERM');
    await advance(999);
    expect(killsOf(platform, 'SIGKILL')).toEqual([]);
    await advance(100);
    expect(killsOf(platform, 'SIGKILL')).toContain(-500);
    expect(await handle.exited).toEqual({ exitCode: 137, code: null, signal: 'SIGKILL', killed: true });
  });

  it('killing: a process SIGKILL cannot end (uninterruptible sleep) is named as still alive, not counted as killed', async () => {
    const { platform, start, commands, lines } = setup();
    platform.onSignal = (info, signal) => {
      if (signal !== 'SIGKILL' || info.pid === 501) return; // 501 is in D state
      platform.processes.delete(info.pid);
      commands.find((command) => command.pid === info.pid)?.finish({ code: null, signal });
    };
    const handle = start({ killTimeout: 100 });
    platform.processes.get(501)!.state = 'D';
    handle.signal('SIGTERM');
    await advance(7000);
    const result = await handle.exited;
    expect(result).toMatchObject({ exitCode: 137, killed: true });
    const summary = lines.find((line) => line.includes('stopped in'));
    expect(summary).toMatch(/0 exited by themselves, 1 killed: 500 \(cmd-500\); 1 still alive after SIGKILL: 501$/);
  });

  it('stopping: a second stop signal is forwarded to every root the first reached, once; a third kills at once', async () => {
    const { platform, start, ignoreStop, lines } = setup();
    ignoreStop();
    const handle = start({ killTimeout: 10_000 });
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500]);
    handle.signal('SIGINT');
    await advance(50);
    expect(killsOf(platform, 'SIGINT')).toEqual([-500]);
    expect(killsOf(platform, 'SIGKILL')).toEqual([]);
    expect(lines.some((line) => /SIGINT received: second stop signal, forwarding it too/.test(line))).toBe(true);
    handle.signal('SIGINT');
    await advance(50);
    expect(killsOf(platform, 'SIGINT')).toEqual([-500]);
    expect(killsOf(platform, 'SIGKILL')).toContain(-500);
    expect(lines.some((line) => /SIGINT received: third stop signal, killing the tree now/.test(line))).toBe(true);
    expect((await handle.exited).killed).toBe(true);
  });

  it('stopping: a second stop signal that comes before the first went out follows it to the same roots', async () => {
    const { platform, start, ignoreStop } = setup();
    ignoreStop();
    const handle = start({ killTimeout: 10_000 });
    handle.signal('SIGTERM');
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500, -500]);
    expect(killsOf(platform, 'SIGKILL')).toEqual([]);
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGKILL')).toContain(-500);
    expect((await handle.exited).killed).toBe(true);
  });

  it('stop-delay → stopping: SIGTERM waits the delay; a second stop signal ends it early', async () => {
    const { platform, start } = setup();
    const handle = start({ stopDelay: 5000 });
    handle.signal('SIGTERM');
    await advance(4000);
    expect(killsOf(platform, 'SIGTERM')).toEqual([]);
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500]);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it('exited → done: the command exits 3 with nothing left, gsup exits 3 without a look (subreaper)', async () => {
    const { platform, start, commands } = setup({ reaping: true });
    const handle = start();
    platform.processes.delete(501);
    platform.processes.delete(500);
    commands[0].finish({ code: 3, signal: null });
    await advance();
    expect(await handle.exited).toMatchObject({ exitCode: 3 });
    expect(platform.looks).toBe(0);
  });

  it('exited → stopping: what is left in the command’s group is stopped, the command’s status wins', async () => {
    const { platform, start, commands } = setup();
    const handle = start();
    platform.processes.delete(500);
    platform.processes.get(501)!.ppid = GSUP; // reparented
    commands[0].finish({ code: 3, signal: null });
    await advance(100);
    // The group's leader (the command) is gone: no other member stands for the group (a pidfd names only the group
    // its process leads), so the member left in it gets the signal by itself.
    expect(killsOf(platform, 'SIGTERM')).toEqual([501]);
    expect((await handle.exited).exitCode).toBe(3);
  });

  it('exited → daemons → done: a daemon left after exit 0 is waited for; SIGCHLD reaps it and its status is gsup’s', async () => {
    const { platform, start, commands } = setup({ reaping: true });
    const handle = start();
    platform.processes.get(501)!.pgid = 501; // the app left the group: a daemon
    platform.processes.get(501)!.sid = 501;
    platform.processes.get(501)!.ppid = GSUP;
    platform.processes.delete(500);
    commands[0].finish({ code: 0, signal: null });
    await advance(100);
    let done = false;
    void handle.exited.then(() => (done = true));
    expect(done).toBe(false);
    // The daemon is SIGKILLed behind gsup's back; its SIGCHLD arrives.
    platform.die(501, { code: null, signal: 9 });
    platform.sigchld();
    await advance(50); // well before the 1 s look: SIGCHLD woke the loop
    expect(done).toBe(true);
    expect((await handle.exited).exitCode).toBe(137);
  });

  it('ending: a zombie seen by a look before its SIGCHLD is reaped at the end, and its status counts', async () => {
    const { platform, start, commands } = setup({ reaping: true });
    const handle = start();
    Object.assign(platform.processes.get(501)!, { pgid: 501, sid: 501, ppid: GSUP });
    platform.processes.delete(500);
    commands[0].finish({ code: 0, signal: null });
    await advance(100);
    platform.die(501, { code: 5, signal: null }); // no SIGCHLD: the next look finds the tree empty
    await advance(1100);
    expect((await handle.exited).exitCode).toBe(5);
    expect(platform.zombies).toEqual([]);
  });

  it('a missed SIGCHLD: the command’s exit is noticed while signals flood in (libuv is nudged with a SIGCHLD of our own)', async () => {
    const { platform, start } = setup();
    const handle = start();
    await untilLineRead(platform); // the command's line, read at its spawn
    for (let index = 0; index < 100; index++) {
      handle.signal('SIGWINCH');
      await advance(); // each one handled: not merged
    }
    // The command died; libuv was not told (its SIGCHLD dropped): only /proc shows it.
    platform.processes.get(500)!.state = 'Z';
    await advance(60);
    expect(platform.kills).toContainEqual({ pid: GSUP, signal: 'SIGCHLD' });
    handle.stop();
  });

  it('restarting: exit 1 with nothing left restarts after the delay, a new run', async () => {
    const { platform, start, commands } = setup({ reaping: true });
    const handle = start({ restart: 'on-failure', restartDelay: 1000 });
    platform.processes.delete(501);
    platform.processes.delete(500);
    commands[0].finish({ code: 1, signal: null });
    await advance(999);
    expect(commands).toHaveLength(1);
    await advance(10);
    expect(commands).toHaveLength(2);
    expect(handle.pid).toBe(600);
    handle.signal('SIGTERM');
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-600]);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it('restart clean-up: a first stop signal cancels the restart without a signal of its own, a second is forwarded, a third kills', async () => {
    const { platform, start, commands } = setup();
    platform.onSignal = (info, signal) => {
      if (signal === 'SIGKILL') platform.processes.delete(info.pid);
    };
    const handle = start({ restart: 'on-failure', killTimeout: 10_000, restartDelay: 10 });
    platform.processes.delete(500);
    platform.processes.get(501)!.ppid = GSUP;
    commands[0].finish({ code: 1, signal: null });
    // The leftover (ignoring SIGTERM) is being stopped before the restart: by itself (its group's leader is gone).
    await advance(50);
    expect(killsOf(platform, 'SIGTERM')).toEqual([501]);
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGTERM')).toEqual([501]);
    expect(killsOf(platform, 'SIGKILL')).toEqual([]);
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGTERM')).toEqual([501, 501]);
    expect(killsOf(platform, 'SIGKILL')).toEqual([]);
    handle.signal('SIGTERM');
    await advance(50);
    expect(killsOf(platform, 'SIGKILL')).toContain(501);
    expect((await handle.exited).exitCode).toBe(1);
    expect(commands).toHaveLength(1);
  });

  it('restart after the leftovers are stopped: the restart said once, and no tree line after the stop’s summary', async () => {
    const { platform, start, commands, lines } = setup({ reaping: true });
    // The app exits 0 on SIGTERM (gsup reaps it: SIGCHLD); the command dies of it.
    platform.onSignal = (info, signal) => {
      if (signal !== 'SIGTERM') return;
      const command = commands.find((candidate) => candidate.pid === info.pid);
      if (command) (platform.processes.delete(info.pid), command.finish({ code: null, signal }));
      else (platform.die(info.pid, { code: 0, signal: null }), platform.sigchld());
    };
    const handle = start({ restart: 'on-failure', restartDelay: 1000 });
    platform.processes.delete(500);
    platform.processes.get(501)!.ppid = GSUP; // reparented to gsup (subreaper), still in the command's group
    commands[0].finish({ code: 1, signal: null });
    await advance(500);
    const summary = lines.findIndex((line) => line.includes('stopped in'));
    expect(summary).toBeGreaterThan(0);
    const restart = /^\[gsup\] command exited with code 1 \(restart 1 of 10\): restarting in /;
    expect(lines.slice(summary + 1)).toEqual([expect.stringMatching(restart)]);
    expect(lines.filter((line) => line.includes('restart 1 of 10'))).toHaveLength(1);
    await advance(1000);
    expect(commands).toHaveLength(2);
    handle.stop();
    await advance(100);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it('restarting: a stop signal during the delay ends it, with the last status and no new run', async () => {
    const { platform, start, commands } = setup({ reaping: true });
    const handle = start({ restart: 'always', restartDelay: 5000 });
    platform.processes.delete(501);
    platform.processes.delete(500);
    commands[0].finish({ code: 0, signal: null });
    await advance(100);
    handle.signal('SIGINT');
    await advance(10);
    expect((await handle.exited).exitCode).toBe(0);
    await advance(6000);
    expect(commands).toHaveLength(1);
  });

  it('a stop signal held before the spawn: the command is never started, exit 128+N', async () => {
    const { start, commands } = setup();
    const held: SignalName[] = ['SIGHUP', 'SIGINT'];
    const handle = start({ inbox: { attach: (listener) => held.forEach(listener) } });
    expect(handle.pid).toBeUndefined();
    expect(commands).toHaveLength(0);
    expect((await handle.exited).exitCode).toBe(130);
  });

  it('a stop signal Node’s start-up handler swallowed (PID 1): no spawn, exit 128+N', async () => {
    const { start, commands } = setup();
    const handle = start({ inbox: { attach: () => {}, swallowed: 'SIGTERM' } });
    expect(commands).toHaveLength(0);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it.each([
    ['swallowed by Node’s start-up handler (PID 1)', { attach: () => {}, swallowed: 'SIGTERM' as const }],
    ['held by gsup’s handlers', { attach: (listener: (signal: SignalName) => void) => listener('SIGTERM') }],
  ])(
    '-r TERM:USR1 and a SIGTERM before the spawn, %s: no stop signal, so the command starts and gets SIGUSR1',
    async (_, inbox) => {
      const { platform, start, commands } = setup();
      const handle = start({ inbox, rewrite: new Map([['SIGTERM', 'SIGUSR1']]) });
      await advance(100);
      expect(commands).toHaveLength(1);
      expect(killsOf(platform, 'SIGUSR1')).toEqual([-500]);
      expect(killsOf(platform, 'SIGTERM')).toEqual([]);
      handle.signal('SIGINT');
      await advance(100);
      expect((await handle.exited).exitCode).toBe(130);
    },
  );

  it('an internal error stops the tree with the normal sequence and exits 125', async () => {
    const { platform, start } = setup();
    const list = platform.listProcesses.bind(platform);
    let failures = 1;
    platform.listProcesses = async () => {
      if (failures-- > 0) throw new Error('proc went away');
      return list();
    };
    const handle = start();
    await untilLineRead(platform); // the command's line, read at its spawn
    handle.signal('SIGHUP'); // forwarded; its look at the tree fails
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500]);
    expect((await handle.exited).exitCode).toBe(125);
  });
});

describe('faults', () => {
  beforeEach(onFakeClock);

  it('a look that fails while killing does not end gsup with the tree alive: it looks again and kills, then exits 125', async () => {
    const { platform, start, ignoreStop } = setup();
    ignoreStop();
    const handle = start({ killTimeout: 100 });
    handle.signal('SIGTERM');
    await advance(50); // the stop signal went out (and was ignored)
    const list = platform.listProcesses.bind(platform);
    let failed = false;
    platform.listProcesses = async () => {
      // The first look once killing has begun fails.
      if (!failed && platform.kills.some((kill) => kill.signal === 'SIGKILL')) {
        failed = true;
        throw new Error('proc went away');
      }
      return list();
    };
    platform.processes.get(500)!.pgid = 1; // the group kill misses the app from now on: only a look finds it
    platform.processes.get(501)!.pgid = 501;
    await advance(200);
    expect(platform.processes.has(501)).toBe(false);
    expect((await handle.exited).exitCode).toBe(125);
  });
});

describe('an effect that throws', () => {
  beforeEach(onFakeClock);

  it('becomes a fault the machine handles (it is not left half-applied): the tree is killed, exit 125', async () => {
    const { platform, start } = setup();
    const signalGroup = platform.signalGroup.bind(platform);
    let thrown = false;
    // The stop signal's delivery fails once, inside the stop round (an effect of step).
    platform.signalGroup = (member, signal) => {
      if (signal === 'SIGTERM' && !thrown) {
        thrown = true;
        throw new Error('pidfd went away');
      }
      return signalGroup(member, signal);
    };
    const handle = start({ killTimeout: 10_000 });
    handle.signal('SIGTERM');
    await advance(100);
    expect(thrown).toBe(true);
    expect(killsOf(platform, 'SIGKILL')).toContain(-500); // a fault while stopping kills at once
    expect((await handle.exited).exitCode).toBe(125);
  });
});

describe('a restart whose run cannot be spawned (issue 35, part 3): a failed start under the restart policy', () => {
  beforeEach(onFakeClock);

  /** Run 1 exits 1 (nothing left); the spawns after it fail as `failures` says, in order (undefined: it works). */
  function crashThen(failures: Array<'throw' | 'ENOENT' | undefined>, options: SuperviseOptions) {
    const world = setup({ reaping: true });
    let calls = 0;
    const spawn: SpawnFunction = (command, args, spawnOptions) => {
      const failure = calls++ === 0 ? undefined : failures.shift();
      if (failure === 'throw') throw new Error('no report channel for run 2: socketpair failed (EMFILE)');
      // Node's own way: no pid, its 'error' event as the end.
      if (failure === 'ENOENT') {
        const exited = Promise.resolve<CommandExit>({ code: null, signal: null, errorCode: 'ENOENT' });
        return { pid: undefined, exited, stdout: null, stderr: null };
      }
      return world.spawn(command, args, spawnOptions);
    };
    const handle = world.start({ restart: 'on-failure', restartDelay: 1000, spawn, ...options });
    world.platform.processes.delete(501);
    world.platform.processes.delete(500);
    world.commands[0].finish({ code: 1, signal: null });
    return { ...world, handle };
  }

  it('a spawn that throws, then one Node could not start (ENOENT): each a failed start with back-off; the third runs', async () => {
    const { handle, lines, commands, platform } = crashThen(['throw', 'ENOENT'], { maxRestarts: 5 });
    await advance(1010);
    expect(lines).toContain(
      '[gsup] command could not be started (no report channel for run 2: socketpair failed (EMFILE)) ' +
        '(restart 2 of 5): restarting in 2.00s',
    );
    await advance(2010);
    expect(lines).toContain('[gsup] command could not be started (ENOENT) (restart 3 of 5): restarting in 4.00s');
    await advance(4010);
    expect(commands).toHaveLength(2);
    expect(handle.pid).toBe(600);
    expect(lines.filter((line) => line.includes('internal error'))).toEqual([]);
    handle.signal('SIGTERM');
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-600]);
    expect((await handle.exited).exitCode).toBe(143);
  });

  it('given up at --max-restarts: gsup exits with the failed start’s status (127 not found, 125 gsup’s own failure)', async () => {
    const notFound = crashThen(['ENOENT', 'ENOENT'], { maxRestarts: 2 });
    await advance(1010 + 2010);
    expect(notFound.lines).toContain(
      '[gsup] run 3 could not be started (ENOENT); giving up after 2 restart(s) in a row',
    );
    expect(await notFound.handle.exited).toMatchObject({ exitCode: 127, error: 'app: command not found' });
    const thrown = crashThen(['throw'], { maxRestarts: 1 });
    await advance(1010);
    expect(await thrown.handle.exited).toMatchObject({
      exitCode: 125,
      error: 'app: cannot start (no report channel for run 2: socketpair failed (EMFILE))',
    });
  });
});

describe('a first run that cannot be prepared (issue 35, part 3)', () => {
  beforeEach(onFakeClock);

  it('a spawn that throws: no internal error, no restart; gsup exits 125 saying what failed', async () => {
    const world = setup();
    const spawn: SpawnFunction = () => {
      throw new Error('no report channel for run 1: socketpair failed (EMFILE)');
    };
    const handle = world.start({ restart: 'always', spawn });
    await advance(10);
    expect(await handle.exited).toMatchObject({
      exitCode: 125,
      error: 'app: cannot start (no report channel for run 1: socketpair failed (EMFILE))',
    });
    expect(world.lines.filter((line) => /internal error|restart/.test(line))).toEqual([]);
  });
});

describe('supervise (unit, injected spawn and platform)', () => {
  it('forwards a signal to the command’s group with one kill(2)', async () => {
    const { platform, start } = shellSetup();
    const handle = start();
    handle.signal('SIGHUP');
    const result = await handle.stop();
    expect(platform.kills.filter((kill) => kill.signal === 'SIGHUP')).toEqual([{ pid: -500, signal: 'SIGHUP' }]);
    expect(platform.kills.filter((kill) => kill.signal === 'SIGTERM')).toEqual([{ pid: -500, signal: 'SIGTERM' }]);
    expect(result).toEqual({ exitCode: 143, code: null, signal: 'SIGTERM', killed: false });
  });

  it('--target tree signals each process by pid', async () => {
    const { platform, start } = shellSetup();
    const handle = start({ target: 'tree' });
    handle.signal('SIGUSR1');
    await handle.stop();
    expect(
      platform.kills
        .filter((kill) => kill.signal === 'SIGUSR1')
        .map((kill) => kill.pid)
        .sort(),
    ).toEqual([500, 501]);
  });

  it('rewrites and drops before anything else', async () => {
    const { platform, start } = shellSetup();
    const rewrite = new Map<SignalName, SignalName | null>([
      ['SIGHUP', null],
      ['SIGTERM', 'SIGINT'],
    ]);
    const handle = start({ rewrite });
    handle.signal('SIGHUP');
    handle.signal('SIGTERM');
    const result = await handle.exited;
    expect(platform.kills.map((kill) => kill.signal)).toEqual(['SIGINT']);
    expect(result.exitCode).toBe(130);
  });

  it('SIGKILLs what ignores the stop signal at the kill timeout', async () => {
    const { platform, start, ignoreStop } = shellSetup();
    ignoreStop();
    const handle = start({ killTimeout: 50 });
    const result = await handle.stop();
    expect(result).toEqual({ exitCode: 137, code: null, signal: 'SIGKILL', killed: true });
    expect(platform.kills.some((kill) => kill.pid === -500 && kill.signal === 'SIGKILL')).toBe(true);
  });

  it('asked to stop (a stop signal, or stop()): the `stopping` hook runs once, once the machine took the stop (its signal goes after a look); a forwarded signal never', async () => {
    const { platform, start } = shellSetup();
    const seen: number[] = [];
    const handle = start({ stopping: () => seen.push(platform.kills.length) });
    handle.signal('SIGUSR1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
    handle.signal('SIGTERM');
    await handle.exited;
    expect(seen).toEqual([1]); // the SIGUSR1 sent before; the stop's SIGTERM after
    expect(platform.kills.map((kill) => kill.signal)).toEqual(['SIGUSR1', 'SIGTERM']);
  });

  it("job control: SIGTSTP goes to the command's group as SIGSTOP (its group is orphaned), then gsup suspends itself", async () => {
    const { platform, start } = shellSetup();
    let suspended = 0;
    const handle = start({ suspendSelf: () => suspended++ });
    handle.signal('SIGTSTP');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(platform.kills).toEqual([{ pid: -500, signal: 'SIGSTOP' }]);
    expect(suspended).toBe(1);
    await handle.stop();
  });

  it('job control: a -r rule replaces the signal the command gets (even a stop signal, even nothing), never gsup’s own suspension; in child mode SIGTSTP is forwarded as it is', async () => {
    const rules = (to: SignalName | null) => ({ rewrite: new Map<SignalName, SignalName | null>([['SIGTSTP', to]]) });
    const cases: Array<[SuperviseOptions, SignalName[]]> = [
      [rules('SIGUSR1'), ['SIGUSR1']],
      [rules('SIGHUP'), ['SIGHUP']],
      [rules('SIGTERM'), ['SIGTERM']], // forwarded as it is: no stop sequence, no kill timeout
      [rules(null), []],
      [{ target: 'child' }, ['SIGTSTP']],
      [{}, ['SIGSTOP']],
    ];
    for (const [options, sent] of cases) {
      const { platform, start } = shellSetup();
      let suspended = 0;
      const lines: string[] = [];
      const logger = new Logger({ verbosity: 0, write: (line) => lines.push(line) });
      const handle = start({ logger, suspendSelf: () => suspended++, ...options });
      handle.signal('SIGTSTP');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(platform.kills.map((kill) => kill.signal)).toEqual(sent);
      expect(suspended).toBe(1);
      expect(lines.filter((line) => line.includes('stopping the tree'))).toEqual([]);
      await handle.stop();
    }
  });

  it('terminal: a run goes through the handover wrapper, not detached; the SIGHUP and SIGCONT of giving the terminal up are swallowed once each', async () => {
    const { platform, start } = shellSetup();
    const calls: Array<{ command: string; args: string[]; detached: boolean }> = [];
    let finish!: (exit: CommandExit) => void;
    const exited = new Promise<CommandExit>((resolve) => (finish = resolve));
    const spawn: SpawnFunction = (command, args, options) => {
      calls.push({ command, args, detached: options.detached });
      platform.add({ pid: 500, ppid: process.pid });
      return { pid: 500, exited, stdout: null, stderr: null };
    };
    platform.handOverTerminal = (expect) => {
      expect('SIGHUP');
      expect('SIGCONT');
      return ['/usr/bin/setsid', '-c'];
    };
    const handle = start({ spawn, terminal: true }, 'sh', ['-c', 'true']);
    expect(calls).toEqual([{ command: '/usr/bin/setsid', args: ['-c', 'sh', '-c', 'true'], detached: false }]);
    for (const signal of ['SIGHUP', 'SIGCONT', 'SIGHUP', 'SIGCONT'] as const) handle.signal(signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(platform.kills).toEqual([
      { pid: -500, signal: 'SIGHUP' },
      { pid: -500, signal: 'SIGCONT' },
    ]);
    finish({ code: 0, signal: null });
    void handle.stop();
  });

  it('terminal: not asked for (the library), or a command not on PATH, spawns as before', async () => {
    for (const [command, terminal] of [
      ['sh', false],
      ['no-such-command-here', true],
    ] as const) {
      const { platform, start } = shellSetup();
      const calls: string[] = [];
      const spawn: SpawnFunction = (name, _args, options) => {
        calls.push(`${name} detached=${options.detached}`);
        return {
          pid: undefined,
          exited: Promise.resolve({ code: null, signal: null, errorCode: 'ENOENT' }),
          stdout: null,
          stderr: null,
        };
      };
      let asked = 0;
      platform.handOverTerminal = () => (asked++, ['/usr/bin/setsid', '-c']);
      await start({ spawn, terminal }, command).exited;
      expect(calls).toEqual([`${command} detached=true`]);
      expect(asked).toBe(terminal ? 1 : 0);
    }
  });
});
