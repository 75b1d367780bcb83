import { describe, expect, it } from 'vitest';
import { execSteps } from '../../../src/engine/children/exec-steps.js';
import { spawnRun } from '../../../src/engine/children/run.js';
import type { SpawnOptions } from '../../../src/engine/children/spawn.js';
import type { RunHandover } from '../../../src/engine/listen/handover.js';
import { DEFAULT_CONFIG } from '../../../src/engine/config/config.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

// The exec steps between a run's spawn and its command, composed: the terminal handed over (setsid -c, or gsup's
// own helper) and LISTEN_PID (a shell's step, or gsup's own helper); one node hop where both are gsup's helper.

const NODE = process.execPath;
const HELPER = [NODE, '/gsup/dist/exec-tty.cjs'];
const SETSID = ['/usr/bin/setsid', '-c'];
const SH = { argv: ['/bin/sh', '-c', 'LISTEN_PID=$$; export LISTEN_PID; exec "$0" "$@"'], helper: false };
const OWN = { argv: HELPER, helper: true };
const env = { PATH: '/bin', NODE_OPTIONS: '--require /app/otel.js' };
const fds = { count: 2, channel: undefined };

describe('execSteps', () => {
  it('none: the command as it is, its environment untouched', () => {
    expect(execSteps(undefined, undefined, env, fds)).toEqual({ prefix: [], env, session: false });
  });

  it("LISTEN_PID by a shell: sh -c before the command; the shell needs no word of gsup's", () => {
    expect(execSteps(undefined, SH, env, fds)).toEqual({ prefix: SH.argv, env, session: false });
    expect(execSteps(SETSID, SH, env, fds)).toEqual({ prefix: [...SETSID, ...SH.argv], env, session: true });
  });

  it("LISTEN_PID by gsup's helper (no shell): told its step, the fds to keep, NODE_OPTIONS passed by for the app", () => {
    expect(execSteps(undefined, OWN, env, { count: 2, channel: 5 })).toEqual({
      prefix: HELPER,
      env: {
        PATH: '/bin',
        GSUP_EXEC_NODE_OPTIONS: '--require /app/otel.js',
        GSUP_EXEC_STEPS: 'listen-pid',
        GSUP_EXEC_KEEP: '3',
        GSUP_EXEC_CHANNEL: '5',
      },
      session: false,
    });
    expect(execSteps(SETSID, OWN, env, fds).prefix).toEqual([...SETSID, ...HELPER]);
  });

  it("the terminal by gsup's helper: it does LISTEN_PID too, in the same exec (no shell hop after it)", () => {
    expect(execSteps(HELPER, SH, env, fds)).toEqual({
      prefix: HELPER,
      env: {
        PATH: '/bin',
        GSUP_EXEC_NODE_OPTIONS: '--require /app/otel.js',
        GSUP_EXEC_STEPS: 'session,listen-pid',
        GSUP_EXEC_KEEP: '2',
      },
      session: true,
    });
    // Alone, as before --listen: the session only, and an IPC channel (a node command) kept through it.
    expect(execSteps(HELPER, undefined, { PATH: '/bin' }, { count: 0, channel: 3 }).env).toEqual({
      PATH: '/bin',
      GSUP_EXEC_STEPS: 'session',
      GSUP_EXEC_KEEP: '1',
      GSUP_EXEC_CHANNEL: '3',
    });
  });
});

describe('spawnRun with the held sockets', () => {
  /** What the spawn was asked: file, argv, options. */
  function spawned(command: string, handed: RunHandover | undefined, ipc = false) {
    const calls: Array<[string, string[], SpawnOptions]> = [];
    const spawn = (file: string, args: string[], options: SpawnOptions) => {
      calls.push([file, args, options]);
      return { pid: 4242, exited: new Promise<never>(() => {}), stdout: null, stderr: null };
    };
    const options = { spawn, env: { PATH: process.env.PATH }, cwd: '/' };
    const platform = new FakePlatform();
    spawnRun(1, command, ['app.js'], DEFAULT_CONFIG, options, platform, undefined, ipc ? () => {} : undefined, handed);
    return calls[0];
  }
  const handed: RunHandover = { fds: [21, 22], env: {}, exec: SH, preloadFirst: false, spawned: () => {} };

  it('fds 3… are the held sockets and the report channel; the IPC channel after them; the exec step first', () => {
    const [file, args, options] = spawned('node', handed, true);
    expect([file, ...args]).toEqual([...SH.argv, 'node', 'app.js']);
    expect(options).toMatchObject({ fds: [21, 22], detached: true });
    expect(options.ipc).toBeTypeOf('function');
  });

  it("gsup's own Node with the preload first: no exec step (the preload sets LISTEN_PID); any other command has it", () => {
    const first = { ...handed, preloadFirst: true };
    const [file, args] = spawned(NODE, first);
    expect([file, ...args]).toEqual([NODE, 'app.js']);
    const [shFile, shArgs] = spawned('true', first);
    expect([shFile, ...shArgs]).toEqual([...SH.argv, 'true', 'app.js']);
    const [notFirst, notFirstArgs] = spawned(NODE, handed);
    expect([notFirst, ...notFirstArgs]).toEqual([...SH.argv, NODE, 'app.js']);
  });

  it('where nothing comes before the command, the path run.ts found is handed on (the spawn looks no more)', () => {
    const first = { ...handed, preloadFirst: true };
    const [file, , options] = spawned(NODE, first);
    expect(file).toBe(NODE);
    expect(options.found).toBe(NODE);
    // An exec step first: what the spawn starts is the step, not the command run.ts found.
    const [, , stepped] = spawned(NODE, handed);
    expect(stepped.found).toBeUndefined();
  });

  it('a command that cannot be found is spawned as it is: Node says so (127), no shell says it for it', () => {
    const [file, args] = spawned('no-such-command-here', handed);
    expect([file, ...args]).toEqual(['no-such-command-here', 'app.js']);
  });
});
