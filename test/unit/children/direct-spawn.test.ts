import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killPids } from '../../helpers/proc.js';
import { directSpawn, nodeSpawn, type SpawnOptions } from '../../../src/engine/children/spawn.js';

// A run's spawn through Node's process handle, without node:child_process: the same exits, errors, fds,
// environment, directory and session as node:child_process gives, each read from what the child itself wrote.

const posix = process.platform !== 'win32';
let dir = '';
const pids: number[] = [];

afterEach(() => {
  killPids(pids);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const base: SpawnOptions = { detached: false, stdio: 'ignore' };

function spawned(command: string, args: string[], options: Partial<SpawnOptions> = {}) {
  const child = directSpawn(command, args, { ...base, ...options });
  if (!child) throw new Error('no direct spawn here');
  if (child.pid !== undefined) pids.push(child.pid);
  return child;
}

describe.skipIf(!posix)('directSpawn', () => {
  it('an exit status, and a death by signal, as node:child_process reports them', async () => {
    const exits = spawned('sh', ['-c', 'exit 3']);
    expect(exits.pid).toBeGreaterThan(0);
    expect(await exits.exited).toEqual({ code: 3, signal: null });
    expect(exits.reaped?.()).toBe(true);
    const killed = spawned('sh', ['-c', 'kill -TERM $$']);
    expect(await killed.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('not reaped while it runs: reaped() turns true only once Node has taken its status', async () => {
    const child = spawned('sleep', ['30']);
    expect(child.reaped?.()).toBe(false);
    process.kill(child.pid!, 'SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(child.reaped?.()).toBe(true);
  });

  it('a command not found, or not executable: no process, the error code as node:child_process gives it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-direct-'));
    const plain = join(dir, 'plain');
    writeFileSync(plain, 'echo no\n');
    chmodSync(plain, 0o644);
    for (const [command, code] of [
      ['gsup-no-such-command', 'ENOENT'],
      [plain, 'EACCES'],
    ]) {
      const direct = spawned(command, []);
      const node = nodeSpawn(command, [], base);
      expect(direct.pid).toBeUndefined();
      expect(await direct.exited).toEqual({ code: null, signal: null, errorCode: code });
      expect(await node.exited).toEqual(await direct.exited);
    }
  });

  it('argv, environment and directory reach the command; an undefined variable is left out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-direct-'));
    const out = join(dir, 'out');
    const env = { PATH: process.env.PATH, GSUP_TEST_A: 'a b', GSUP_TEST_GONE: undefined };
    const script = 'printf "%s|%s|%s|%s|%s" "$1" "$2" "$GSUP_TEST_A" "${GSUP_TEST_GONE-unset}" "$(pwd)" > out';
    const child = spawned('sh', ['-c', script, 'sh', 'one two', '*'], { env, cwd: dir });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(out, 'utf8')).toBe(`one two|*|a b|unset|${dir}`);
  });

  it("gsup's stdio inherited, and the fds given at 3, 4, … (held sockets, a report channel)", async () => {
    dir = mkdtempSync(join(tmpdir(), 'gsup-direct-'));
    const given = join(dir, 'given');
    const fd = openSync(given, 'w');
    try {
      const child = spawned('sh', ['-c', 'echo three >&3; echo four >&4'], { stdio: 'inherit', fds: [fd, fd] });
      expect(await child.exited).toEqual({ code: 0, signal: null });
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(given, 'utf8')).toBe('three\nfour\n');
  });

  it.skipIf(process.platform !== 'linux')(
    'detached: a session and process group of its own (the group target)',
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'gsup-direct-'));
      const out = join(dir, 'out');
      // /proc/PID/stat: pid (comm) state ppid pgrp session …
      const script = `cut -d' ' -f1,5,6 /proc/$$/stat > '${out}'`;
      const child = spawned('sh', ['-c', script], { detached: true });
      expect(await child.exited).toEqual({ code: 0, signal: null });
      const [pid, pgid, sid] = readFileSync(out, 'utf8').trim().split(/\s+/).map(Number);
      expect([pgid, sid]).toEqual([pid, pid]);
      expect(pid).toBe(child.pid);
    },
  );

  it('left to node:child_process: piped output, an IPC channel, a NUL in a string, what Node validates', () => {
    expect(directSpawn('true', [], { ...base, stdio: 'pipe' })).toBeUndefined();
    expect(directSpawn('true', [], { ...base, ipc: () => {} })).toBeUndefined();
    expect(directSpawn('true', ['a\0b'], base)).toBeUndefined();
    expect(directSpawn('true', [], { ...base, env: { A: 'a\0b' } })).toBeUndefined();
    // What Node checks with its own errors, from plain JS callers of the library: an empty command, a number in
    // argv, a URL as the directory.
    expect(directSpawn('', [], base)).toBeUndefined();
    expect(directSpawn('echo', [5 as unknown as string], base)).toBeUndefined();
    expect(directSpawn('true', [], { ...base, cwd: new URL('file:///') as unknown as string })).toBeUndefined();
  });
});
