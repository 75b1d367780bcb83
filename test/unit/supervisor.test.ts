import { describe, expect, it } from 'vitest';
import type { CommandExit, SpawnFunction } from '../../src/engine/children/spawn.js';
import { supervise, type SuperviseOptions } from '../../src/engine/shell/supervisor.js';
import { Logger } from '../../src/log.js';
import type { SignalName } from '../../src/platform/index.js';
import { FakePlatform } from '../helpers/fake-platform.js';

// The engine with injected spawn and platform: no real process, no real signal.
function setup() {
  const platform = new FakePlatform();
  platform.add({ pid: process.pid, ppid: 1, pgid: 1, sid: 1 });
  let finish!: (exit: CommandExit) => void;
  const exited = new Promise<CommandExit>((resolve) => (finish = resolve));
  const spawn: SpawnFunction = () => {
    platform.add({ pid: 500, ppid: process.pid }); // the command: group and session 500
    platform.add({ pid: 501, ppid: 500, pgid: 500, sid: 500 }); // its app
    return { pid: 500, exited, stdout: null, stderr: null };
  };
  // The command dies of the first stop signal it gets; so does the app.
  platform.onSignal = (info, signal) => {
    if (signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGKILL') {
      platform.processes.delete(info.pid);
      if (info.pid === 500) finish({ code: null, signal });
    }
  };
  return { platform, spawn, finish };
}

describe('supervise (unit, injected spawn and platform)', () => {
  it('forwards a signal to the command’s group with one kill(2)', async () => {
    const { platform, spawn } = setup();
    const handle = supervise('app', [], { platform, spawn });
    handle.signal('SIGHUP');
    const result = await handle.stop();
    expect(platform.kills.filter((kill) => kill.signal === 'SIGHUP')).toEqual([{ pid: -500, signal: 'SIGHUP' }]);
    expect(platform.kills.filter((kill) => kill.signal === 'SIGTERM')).toEqual([{ pid: -500, signal: 'SIGTERM' }]);
    expect(result).toEqual({ exitCode: 143, code: null, signal: 'SIGTERM', killed: false });
  });

  it('--target tree signals each process by pid', async () => {
    const { platform, spawn } = setup();
    const handle = supervise('app', [], { platform, spawn, target: 'tree' });
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
    const { platform, spawn } = setup();
    const rewrite = new Map<SignalName, SignalName | null>([
      ['SIGHUP', null],
      ['SIGTERM', 'SIGINT'],
    ]);
    const handle = supervise('app', [], { platform, spawn, rewrite });
    handle.signal('SIGHUP');
    handle.signal('SIGTERM');
    const result = await handle.exited;
    expect(platform.kills.map((kill) => kill.signal)).toEqual(['SIGINT']);
    expect(result.exitCode).toBe(130);
  });

  it('SIGKILLs what ignores the stop signal at the kill timeout', async () => {
    const { platform, spawn, finish } = setup();
    platform.onSignal = (info, signal) => {
      if (signal !== 'SIGKILL') return;
      platform.processes.delete(info.pid);
      if (info.pid === 500) finish({ code: null, signal });
    };
    const handle = supervise('app', [], { platform, spawn, killTimeout: 50 });
    const result = await handle.stop();
    expect(result).toEqual({ exitCode: 137, code: null, signal: 'SIGKILL', killed: true });
    expect(platform.kills.some((kill) => kill.pid === -500 && kill.signal === 'SIGKILL')).toBe(true);
  });

  it("job control: SIGTSTP goes to the command's group as SIGSTOP (its group is orphaned), then gsup suspends itself", async () => {
    const { platform, spawn } = setup();
    let suspended = 0;
    const handle = supervise('app', [], { platform, spawn, suspendSelf: () => suspended++ });
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
      const { platform, spawn } = setup();
      let suspended = 0;
      const lines: string[] = [];
      const logger = new Logger({ verbosity: 0, write: (line) => lines.push(line) });
      const handle = supervise('app', [], { platform, spawn, logger, suspendSelf: () => suspended++, ...options });
      handle.signal('SIGTSTP');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(platform.kills.map((kill) => kill.signal)).toEqual(sent);
      expect(suspended).toBe(1);
      expect(lines.filter((line) => line.includes('stopping the tree'))).toEqual([]);
      await handle.stop();
    }
  });

  it('terminal: a run goes through the handover wrapper, not detached; the SIGHUP and SIGCONT of giving the terminal up are swallowed once each', async () => {
    const { platform, finish } = setup();
    const calls: Array<{ command: string; args: string[]; detached: boolean }> = [];
    const exited = new Promise<CommandExit>(() => {});
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
    const handle = supervise('sh', ['-c', 'true'], { platform, spawn, terminal: true });
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
      const { platform } = setup();
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
      await supervise(command, [], { platform, spawn, terminal }).exited;
      expect(calls).toEqual([`${command} detached=true`]);
      expect(asked).toBe(terminal ? 1 : 0);
    }
  });
});
