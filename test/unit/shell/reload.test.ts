import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SpawnFunction } from '../../../src/engine/children/spawn.js';
import type { SuperviseOptions } from '../../../src/engine/shell/supervisor.js';
import { GSUP, killsOf, shellSetup } from '../../helpers/shell.js';
import type { FakePlatform } from '../../helpers/fake-platform.js';

// Reloads through the shell (supervise) with an injected platform and spawn (test/helpers/shell.ts): each run's
// command is `node` (pid 500, 600, …, a group of its own with its app, pid + 1), which says ready over IPC
// (--wait-ready) when the test says so. Each scenario has its golden transcript.

let transcript: { platform: FakePlatform; lines: string[]; result: Promise<unknown> } | undefined;

beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date', 'performance', 'hrtime'],
  });
});
afterEach(async (context) => {
  const recorded = transcript;
  transcript = undefined;
  if (recorded && context.task.result?.state === 'pass') {
    const result = await Promise.race([recorded.result, Promise.resolve('(still running)')]);
    expect({
      kills: recorded.platform.kills.map(({ pid, signal }) => `${signal} ${pid === GSUP ? 'gsup' : pid}`),
      log: recorded.lines.map((line) => line.replace(/\d+(\.\d+)?(ms|s)\b/g, 'N')),
      result,
    }).toMatchSnapshot();
  }
  vi.useRealTimers();
});

const advance = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

/** The shared set-up, `node` as the command, --wait-ready and the reload signal SIGHUP; each run's IPC kept. */
function setup(options: SuperviseOptions = {}, reaping = false) {
  const world = shellSetup({ reaping });
  const said: Array<(message: unknown) => unknown> = [];
  const spawn: SpawnFunction = (command, args, spawnOptions) => {
    said.push(spawnOptions.ipc ?? (() => {}));
    return world.spawn(command, args, spawnOptions);
  };
  const handle = world.start({ waitReady: true, reloadSignal: 'SIGHUP', spawn, ...options }, 'node');
  transcript = { platform: world.platform, lines: world.lines, result: handle.exited };
  /** Run N says `ready` over its IPC channel. */
  const ready = async (run: number) => (said[run - 1]('ready'), advance());
  return { ...world, handle, ready };
}

describe('a reload through the shell', () => {
  it('run 2 ready: run 1 gets SIGTERM (its group alone), its summary; a stop then reaches run 2 alone', async () => {
    const { platform, handle, ready, lines } = setup();
    await ready(1);
    handle.signal('SIGHUP');
    await advance();
    expect(platform.processes.has(600)).toBe(true);
    expect(killsOf(platform, 'SIGHUP')).toEqual([]); // the reload signal is never forwarded
    await ready(2);
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500]);
    expect(lines).toContainEqual(
      expect.stringMatching(/run 1 retired in \d+ms \(its command died of signal SIGTERM\)/),
    );
    handle.stop();
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500, -600]);
    expect(await handle.exited).toMatchObject({ exitCode: 143 });
  });

  it('run 1 ignores its SIGTERM: its own kill timeout SIGKILLs its group; run 2 is untouched', async () => {
    const { platform, handle, ready, commands } = setup({ killTimeout: 1000 });
    platform.onSignal = (info, signal) => {
      if (info.pgid === 500 && signal !== 'SIGKILL') return; // run 1 ignores SIGTERM
      if (signal !== 'SIGTERM' && signal !== 'SIGKILL') return;
      platform.processes.delete(info.pid);
      commands.find((command) => command.pid === info.pid)?.finish({ code: null, signal });
    };
    await ready(1);
    handle.signal('SIGHUP');
    await advance();
    await ready(2);
    await advance(999);
    expect(killsOf(platform, 'SIGKILL')).toEqual([]);
    await advance(200);
    expect(killsOf(platform, 'SIGKILL')).toContain(-500);
    expect(killsOf(platform, 'SIGKILL')).not.toContain(-600);
    expect(platform.processes.has(601)).toBe(true);
    handle.stop();
    await advance(100);
    expect(await handle.exited).toMatchObject({ exitCode: 143, killed: true });
  });

  it('run 2 never ready: at its ready timeout it is stopped alone, run 1 serves on and is stopped once at the end', async () => {
    const { platform, handle, ready, lines } = setup({ readyTimeout: 500 });
    await ready(1);
    handle.signal('SIGHUP');
    await advance(600);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-600]);
    expect(lines).toContainEqual(expect.stringContaining('the reload failed, run 1 keeps serving'));
    handle.stop();
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-600, -500]);
    expect(await handle.exited).toMatchObject({ exitCode: 143 });
  });

  it('a stop before run 2 is ready: one stop of the whole tree, each root once; the status is run 1’s', async () => {
    const { platform, handle, ready, commands } = setup();
    await ready(1);
    handle.signal('SIGHUP');
    await advance();
    platform.onSignal = (info, signal) => {
      if (signal !== 'SIGTERM') return;
      platform.processes.delete(info.pid);
      // Run 1 exits 0 on SIGTERM, run 2 dies of it: gsup's status is run 1's.
      const exit = info.pid === 500 ? { code: 0, signal: null } : { code: null, signal };
      commands.find((command) => command.pid === info.pid)?.finish(exit);
    };
    handle.stop();
    await advance(100);
    expect(killsOf(platform, 'SIGTERM').sort((a, b) => a - b)).toEqual([-600, -500]);
    expect(await handle.exited).toMatchObject({ exitCode: 0 });
  });

  it('a restart while run 1 retires, its spawn before the next look (F1): run 1 retired once gone, reloads go on', async () => {
    const always = { restart: 'always' as const, restartDelay: 1 };
    const { platform, handle, ready, commands, lines } = setup(always, true);
    const die = (pid: number, exit: { code: number | null; signal: NodeJS.Signals | null }) => {
      for (const each of [pid, pid + 1]) platform.processes.delete(each);
      commands.find((command) => command.pid === pid)?.finish(exit);
      platform.sigchld();
    };
    // Run 1 drains on SIGTERM (leaves when the test says); the others leave at once.
    platform.onSignal = (info, signal) => {
      if (signal === 'SIGTERM' && info.pgid === 500) return;
      if (signal === 'SIGTERM' || signal === 'SIGKILL') die(info.pgid, { code: null, signal });
    };
    await ready(1);
    handle.signal('SIGHUP');
    await advance();
    await ready(2);
    await advance(100);
    expect(killsOf(platform, 'SIGTERM')).toEqual([-500]);
    die(600, { code: 1, signal: null }); // run 2 crashes while run 1 drains: a stop of what is left, then a restart
    await advance(100);
    // /proc is slow now: run 1 leaves, the stop ends (gsup has no child left), run 3 spawns before any look ends.
    let release!: () => void;
    platform.lookGate = new Promise((resolve) => (release = resolve));
    die(500, { code: 0, signal: null });
    await advance(10);
    expect(platform.processes.has(700)).toBe(true);
    release();
    platform.lookGate = undefined;
    await advance(100);
    expect(lines).toContainEqual(expect.stringMatching(/run 1 retired in \d+ms \(its command exited with code 0\)/));
    // Nothing waits any more: run 3 ready, the next reload signal starts run 4 at once; run 1's timer never fires.
    await ready(3);
    handle.signal('SIGHUP');
    await advance();
    expect(platform.processes.has(800)).toBe(true);
    await advance(15_000);
    expect(lines.filter((line) => line.includes("run 1's kill timeout"))).toEqual([]);
    handle.stop();
    await advance(100);
    expect(await handle.exited).toMatchObject({ exitCode: 143 });
  });
});

describe('a reload whose next run cannot be prepared or spawned (issue 35, part 3)', () => {
  it('the spawn throws (EMFILE): one line, counted failed, run 1 serves on untouched; the next reload works', async () => {
    const world = shellSetup();
    const said: Array<(message: unknown) => unknown> = [];
    let calls = 0;
    const spawn: SpawnFunction = (command, args, spawnOptions) => {
      if (++calls === 2) throw Object.assign(new Error('spawn EMFILE'), { code: 'EMFILE' });
      said.push(spawnOptions.ipc ?? (() => {}));
      return world.spawn(command, args, spawnOptions);
    };
    const handle = world.start({ waitReady: true, reloadSignal: 'SIGHUP', spawn }, 'node');
    transcript = { platform: world.platform, lines: world.lines, result: handle.exited };
    said[0]('ready');
    await advance();
    handle.signal('SIGHUP');
    await advance(100);
    expect(world.lines).toContainEqual(
      expect.stringContaining('run 2 could not be started (spawn EMFILE): the reload failed, run 1 keeps serving'),
    );
    expect(world.lines.filter((line) => line.includes('internal error'))).toEqual([]);
    expect(world.platform.kills).toEqual([]);
    expect(world.platform.processes.has(500)).toBe(true);
    handle.signal('SIGHUP');
    await advance();
    expect(world.platform.processes.has(600)).toBe(true);
    said[1]('ready');
    await advance(100);
    expect(killsOf(world.platform, 'SIGTERM')).toEqual([-500]);
    handle.stop();
    await advance(100);
    expect(await handle.exited).toMatchObject({ exitCode: 143 });
  });
});
