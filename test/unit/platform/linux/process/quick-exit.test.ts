import { constants } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { quickExit, type QuickExitCalls } from '../../../../../src/platform/linux/process/quick-exit.js';

// How the CLI ends (src/platform/linux/process/quick-exit.ts): at once, unless Node's own exit has stdio to put
// back. libc's calls are a test's here; test/e2e/quick-exit.test.ts runs the real thing.
const F_GETFL = 3;

function fakeLibc(terminals: number[] = []) {
  const flags = new Map([
    [0, constants.O_RDONLY],
    [1, constants.O_WRONLY],
    [2, constants.O_WRONLY | constants.O_APPEND],
  ]);
  const exits: number[] = [];
  const calls: QuickExitCalls = {
    fcntl: (fd, command) => (command === F_GETFL ? (flags.get(fd) ?? -1) : -1),
    isatty: (fd) => (terminals.includes(fd) ? 1 : 0),
    exit: (code) => void exits.push(code),
  };
  return { calls, flags, exits };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the CLI’s quick exit', () => {
  it('ends with the code when stdio is as it was at start', () => {
    const libc = fakeLibc();
    const end = quickExit(libc.calls, false);
    libc.flags.set(1, constants.O_WRONLY | constants.O_APPEND); // not O_NONBLOCK: Node puts nothing back
    end?.(7);
    expect(libc.exits).toEqual([7]);
  });

  it.each([0, 1, 2])('leaves the end to Node when fd %i was made non-blocking since (Node puts it back)', (fd) => {
    const libc = fakeLibc();
    const end = quickExit(libc.calls, false);
    libc.flags.set(fd, libc.flags.get(fd)! | constants.O_NONBLOCK);
    end?.(0);
    expect(end).toBeTypeOf('function');
    expect(libc.exits).toEqual([]);
  });

  it('leaves the end to Node when a non-blocking fd was made blocking since', () => {
    const libc = fakeLibc();
    libc.flags.set(2, constants.O_WRONLY | constants.O_NONBLOCK);
    const end = quickExit(libc.calls, false);
    libc.flags.set(2, constants.O_WRONLY);
    end?.(0);
    expect(libc.exits).toEqual([]);
  });

  it.each([0, 1, 2])('is none with a terminal on fd %i (Node puts its modes back)', (fd) => {
    expect(quickExit(fakeLibc([fd]).calls, false)).toBeUndefined();
  });

  it('is none when Node has something to write at its exit (a profile, coverage), or without libc', () => {
    expect(quickExit(fakeLibc().calls, true)).toBeUndefined();
    vi.stubEnv('NODE_V8_COVERAGE', '/tmp/coverage');
    expect(quickExit(fakeLibc().calls)).toBeUndefined();
    vi.unstubAllEnvs();
    expect(quickExit(undefined, false)).toBeUndefined();
  });
});
