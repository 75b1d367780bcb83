import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killPids } from '../../helpers/proc.js';
import { spawnHere, type SpawnOptions } from '../../../src/engine/children/spawn.js';
import type { CommandExit } from '../../../src/engine/machine/values.js';
import { signalName } from '../../../src/platform/signals.js';
import { linuxPlatform } from '../../../src/platform/linux/platform.js';
import { load } from '../../../src/platform/linux/native.js';
import { onPath } from '../../../src/platform/which.js';

// A run's command started by posix_spawn (src/platform/linux/process/posix-spawn.ts), reaped by its caller: the
// same exits, argv, environment, directory, session, fds and signals as libuv's child gets, each read from what
// the child itself wrote. Here the test reaps, by pid (gsup's Children does it in gsup).

const linux = process.platform === 'linux';
let dir = '';
const pids: number[] = [];
const waiting = new Map<number, (exit: CommandExit) => void>();
let poll: NodeJS.Timeout | undefined;

/** Reaps this file's children only: any other zombie of the worker is left where it is. */
function reapHere(pid: number, reaped: (exit: CommandExit) => void): void {
  waiting.set(pid, reaped);
  poll ??= setInterval(() => {
    const child = linuxPlatform.reapOne!({ size: 1, has: (other) => !waiting.has(other) });
    if (typeof child !== 'object') return;
    const exit = { code: child.code, signal: child.signal === null ? null : (signalName(child.signal) ?? null) };
    waiting.get(child.pid)?.(exit);
    waiting.delete(child.pid);
  }, 5);
}

afterEach(() => {
  killPids(pids);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const base: SpawnOptions = { detached: false, stdio: 'inherit' };

function spawned(command: string, args: string[], options: Partial<SpawnOptions> = {}) {
  const child = spawnHere(linuxPlatform, reapHere, command, args, { ...base, ...options });
  if (!child) throw new Error('no posix_spawn here');
  if (child.pid !== undefined) pids.push(child.pid);
  return child;
}

describe.runIf(linux)('spawnHere (posix_spawn)', () => {
  afterEach(() => {
    if (waiting.size === 0) {
      clearInterval(poll);
      poll = undefined;
    }
  });

  it('an exit status, and a death by signal, as libuv reports them; reaped() true once its status is taken', async () => {
    const exits = spawned('sh', ['-c', 'exit 3']);
    expect(exits.pid).toBeGreaterThan(0);
    expect(await exits.exited).toEqual({ code: 3, signal: null });
    expect(exits.reaped?.()).toBe(true);
    const sleeping = spawned('sleep', ['30']);
    expect(sleeping.reaped?.()).toBe(false);
    process.kill(sleeping.pid!, 'SIGTERM');
    expect(await sleeping.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('argv, environment and directory reach the command; an undefined variable is left out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-here-'));
    const out = join(dir, 'out');
    const env = { PATH: process.env.PATH, GSUP_TEST_A: 'a b', GSUP_TEST_GONE: undefined };
    const script = 'printf "%s|%s|%s|%s|%s" "$1" "$2" "$GSUP_TEST_A" "${GSUP_TEST_GONE-unset}" "$(pwd)" > out';
    const child = spawned('sh', ['-c', script, 'sh', 'one two', '*'], { env, cwd: dir });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(out, 'utf8')).toBe(`one two|*|a b|unset|${dir}`);
  });

  it("stdio as gsup has it, the fds given at 3, 4, …, and gsup's own stdio close-on-exec again after", async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-here-'));
    const given = join(dir, 'given');
    const fd = openSync(given, 'w');
    // Node marks gsup's stdio close-on-exec (here, in a test worker, it may not be): marked, as in gsup.
    const { fcntl } = load()!;
    const F_GETFD = 1;
    const F_SETFD = 2;
    const marks = [0, 1, 2].map((stdio) => fcntl(stdio, F_GETFD, 0));
    for (const stdio of [0, 1, 2]) fcntl(stdio, F_SETFD, 1);
    try {
      const script = 'echo three >&3; echo four >&4; ls /proc/$$/fd > fds';
      const child = spawned('sh', ['-c', script], { fds: [fd, fd], cwd: dir });
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect([0, 1, 2].map((stdio) => fcntl(stdio, F_GETFD, 0))).toEqual([1, 1, 1]);
    } finally {
      closeSync(fd);
      marks.forEach((mark, stdio) => fcntl(stdio, F_SETFD, mark));
    }
    expect(readFileSync(given, 'utf8')).toBe('three\nfour\n');
    expect(readFileSync(join(dir, 'fds'), 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['0', '1', '2', '3', '4']),
    );
  });

  it('detached: a session and process group of its own (the group target)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-here-'));
    const out = join(dir, 'out');
    const child = spawned('sh', ['-c', `cut -d' ' -f1,5,6 /proc/$$/stat > '${out}'`], { detached: true });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    const [pid, pgid, sid] = readFileSync(out, 'utf8').trim().split(/\s+/).map(Number);
    expect([pid, pgid, sid]).toEqual([child.pid, pid, pid]);
  });

  it('every signal at its default, none blocked (Node ignores SIGPIPE; libc keeps its own signals ignored)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-here-'));
    const child = spawned('sh', ['-c', 'grep -E "^Sig(Blk|Ign)" /proc/$$/status > out'], { cwd: dir });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  it('a path found already (run.ts looked for its exec steps) is the program run: no second look on PATH', async () => {
    // No such command on PATH: only the path handed in can have run it.
    const child = spawned('gsup-no-such-command', ['-c', 'exit 7'], {
      found: onPath('sh', process.env, '/'),
      cwd: '/',
    });
    expect(await child.exited).toEqual({ code: 7, signal: null });
  });

  it('left to libuv: not found, not executable, a script without #!, piped output, IPC, a NUL', () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-here-'));
    const plain = join(dir, 'plain');
    writeFileSync(plain, 'echo no\n');
    chmodSync(plain, 0o644);
    const bare = join(dir, 'bare');
    writeFileSync(bare, 'echo bare\n');
    chmodSync(bare, 0o755);
    const here = (command: string, args: string[], options: Partial<SpawnOptions> = {}) =>
      spawnHere(linuxPlatform, reapHere, command, args, { ...base, ...options });
    expect(here('gsup-no-such-command', [])).toBeUndefined();
    expect(here(plain, [])).toBeUndefined();
    expect(here(bare, [])).toBeUndefined(); // ENOEXEC: execvp runs it with sh
    expect(here('true', [], { stdio: 'pipe' })).toBeUndefined();
    expect(here('true', [], { ipc: () => {} })).toBeUndefined();
    expect(here('true', ['a\0b'])).toBeUndefined();
    // What Node checks and converts itself, from plain JS callers of the library: a number, a URL as the directory.
    expect(here('echo', [5 as unknown as string])).toBeUndefined();
    expect(here('true', [], { cwd: new URL('file:///') as unknown as string })).toBeUndefined();
    expect(here('true', [], { env: { PATH: process.env.PATH, A: 'a\0b' } })).toBeUndefined();
  });
});

describe('onPath', () => {
  it('an empty PATH entry is the current directory, as execvp reads it', () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-here-'));
    const own = join(dir, 'date');
    writeFileSync(own, 'echo mine\n');
    chmodSync(own, 0o755);
    expect(onPath('date', { PATH: `/nonexistent::${process.env.PATH}` }, dir)).toBe(own);
    expect(onPath('date', { PATH: `${process.env.PATH}:` }, dir)).not.toBe(own);
  });
});
