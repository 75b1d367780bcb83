import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chalk } from 'chalk';
import { afterEach, describe, expect, it } from 'vitest';
import { colorWanted, escapeControls, Logger } from '../../../src/output/log.js';
import { StderrOutput } from '../../../src/output/log-output.js';
import { raisedOwnSigpipe, takeOwnSigpipe } from '../../../src/platform/sigpipe.js';
import { stderrPut, type Put } from '../../../src/platform/linux/process/stderr.js';

// What the tree controls (a command line, a title, a probe's output) in a log line: escaped, never acted on.
const FORGED = 'app \u001b[2J\u001b]0;title\u0007\r\n[gsup] forged\tline\u0000\u007f\u009b31m';
// Any byte a terminal acts on, but the line's own end.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('escapeControls', () => {
  it('C0, DEL and C1 as visible escapes; the rest of Unicode as it is', () => {
    expect(escapeControls(FORGED)).toBe('app \\x1b[2J\\x1b]0;title\\x07\\r\\n[gsup] forged\\tline\\x00\\x7f\\x9b31m');
    expect(escapeControls('café ☕ \u2028 C:\\dir')).toBe('café ☕ \u2028 C:\\dir');
  });
});

describe('Logger: what the tree wrote, escaped by construction', () => {
  const capture = (options: ConstructorParameters<typeof Logger>[0]) => {
    const lines: string[] = [];
    return { lines, logger: new Logger({ ...options, write: (line) => lines.push(line) }) };
  };

  it('text: one line, no control character, no forged [gsup] line (the same for say())', () => {
    const { lines, logger } = capture({});
    logger.notice('stopped', `stopped in 5ms: 0 exited by themselves, 1 killed: 42 (${FORGED})`);
    logger.say(`gsup: ${FORGED}: command not found`);
    for (const line of lines) {
      expect(line.endsWith('\n')).toBe(true);
      expect(line.slice(0, -1)).not.toMatch(CONTROL);
      expect(line.slice(0, -1)).not.toContain('\n');
    }
    expect(lines[0]).toBe(`[gsup] stopped in 5ms: 0 exited by themselves, 1 killed: 42 (${escapeControls(FORGED)})\n`);
  });

  it('text in colour: the only escapes are the colour’s own', () => {
    const { lines, logger } = capture({ paint: new Chalk({ level: 1 }) });
    logger.warn('x', FORGED);
    const uncoloured = lines[0].replace(/\u001b\[[0-9;]*m/g, '');
    expect(uncoloured).toBe(`[gsup] ${escapeControls(FORGED)}\n`);
  });

  it('json: DEL and C1 escaped too (JSON.stringify leaves them raw); the value reads back the same', () => {
    const { lines, logger } = capture({ format: 'json' });
    logger.notice('stopped', FORGED, { killed: [{ pid: 42, command: FORGED }] });
    expect(lines[0].slice(0, -1)).not.toMatch(CONTROL);
    expect(JSON.parse(lines[0])).toMatchObject({ message: FORGED, killed: [{ pid: 42, command: FORGED }] });
  });
});

/** A stderr that takes lines until `full`, or `room` bytes at a time. */
function fakeStderr() {
  const taken: string[] = [];
  const state = { full: false, room: Infinity, error: undefined as string | undefined };
  const put: Put = (data) => {
    if (state.error) throw Object.assign(new Error(state.error), { code: state.error });
    if (state.full || state.room === 0) throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
    const length = Math.min(data.length, state.room);
    taken.push(data.subarray(0, length).toString());
    if (state.room !== Infinity) state.room -= length;
    return length;
  };
  return {
    taken,
    state,
    output: new StderrOutput(
      (count) => `lost ${count}\n`,
      () => put,
    ),
  };
}

describe('StderrOutput: a stderr that does not drain is never waited for', () => {
  it('lines wait while it is full, and come out in order once it drains', async () => {
    const { taken, state, output } = fakeStderr();
    output.write('a\n');
    state.full = true;
    output.write('b\n');
    output.write('c\n');
    expect(taken).toEqual(['a\n']);
    state.full = false;
    await output.flush(1000);
    expect(taken).toEqual(['a\n', 'b\n', 'c\n']);
  });

  it('beyond 256 waiting lines, the rest are counted and the count said where they went missing', async () => {
    const { taken, state, output } = fakeStderr();
    state.full = true;
    for (let i = 0; i < 300; i++) output.write(`line ${i}\n`);
    state.full = false;
    output.write('after\n');
    await output.flush(1000);
    expect(taken.slice(0, 256)).toEqual(Array.from({ length: 256 }, (_, i) => `line ${i}\n`));
    expect(taken.slice(256)).toEqual(['lost 44\n', 'after\n']);
  });

  it('lines lost and nothing after: the count comes once the waiting lines are out', async () => {
    const { taken, state, output } = fakeStderr();
    state.full = true;
    for (let i = 0; i < 257; i++) output.write(`line ${i}\n`);
    state.full = false;
    await output.flush(1000);
    expect(taken.at(-1)).toBe('lost 1\n');
    expect(taken).toHaveLength(257);
  });

  it('a long line written in parts, the rest when there is room', async () => {
    const { taken, state, output } = fakeStderr();
    state.room = 3;
    output.write('abcdefgh\n');
    expect(taken).toEqual(['abc']);
    state.room = Infinity;
    await output.flush(1000);
    expect(taken.join('')).toBe('abcdefgh\n');
  });

  it('flush gives up after its time when nothing drains; a reader gone (EPIPE) silences the rest', async () => {
    const { taken, state, output } = fakeStderr();
    state.full = true;
    output.write('kept\n');
    const started = performance.now();
    await output.flush(50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(taken).toEqual([]);
    state.error = 'EPIPE';
    output.write('never\n');
    expect(output.broken).toBe(true);
    state.error = undefined;
    state.full = false;
    output.write('never either\n');
    await output.flush(1000);
    expect(taken).toEqual([]);
  });
});

describe('StderrOutput.ready: the way to stderr found at a spare moment, not at the first line', () => {
  it('opens once, at ready(); a failed open leaves it to the first line', () => {
    const opened: string[] = [];
    const taken: string[] = [];
    let fail = true;
    const output = new StderrOutput(
      (count) => `lost ${count}\n`,
      () => {
        opened.push(fail ? 'failed' : 'opened');
        if (fail) throw new Error('EMFILE');
        return (data) => (taken.push(data.toString()), data.length);
      },
    );
    output.ready();
    expect(opened).toEqual(['failed']);
    expect(output.broken).toBe(false);
    fail = false;
    output.ready();
    output.ready();
    output.write('a\n');
    expect(opened).toEqual(['failed', 'opened']);
    expect(taken).toEqual(['a\n']);
  });
});

describe('own SIGPIPEs', () => {
  it('each counted one is taken once', () => {
    expect(takeOwnSigpipe()).toBe(false);
    raisedOwnSigpipe();
    raisedOwnSigpipe();
    expect([takeOwnSigpipe(), takeOwnSigpipe(), takeOwnSigpipe()]).toEqual([true, true, false]);
  });
});

describe.skipIf(process.platform !== 'linux')('stderrPut on a pipe', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => cleanup.splice(0).forEach((step) => step()));
  const flags = (fd: number) => {
    const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    return parseInt(/^flags:\s+(\d+)/m.exec(info)![1], 8);
  };
  const nonBlocking = (fd: number) => (flags(fd) & constants.O_NONBLOCK) !== 0;

  it('a full pipe: EAGAIN, not a wait; and the shared description (the app’s) stays blocking', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
    const fifo = join(dir, 'stderr');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const shared = openSync(fifo, constants.O_WRONLY); // a reader is there: no wait
    cleanup.push(() => (closeSync(shared), closeSync(reader), rmSync(dir, { recursive: true })));
    const put = stderrPut(shared);
    let written = 0;
    const fill = () => {
      for (;;) written += put(Buffer.alloc(4096, 'y'));
    };
    expect(fill).toThrow(expect.objectContaining({ code: 'EAGAIN' }));
    expect(written).toBeGreaterThanOrEqual(4096);
    expect(nonBlocking(shared)).toBe(false);
    const buffer = Buffer.alloc(8);
    expect(readSync(reader, buffer)).toBe(8);
    expect(buffer.toString()).toBe('yyyyyyyy');
  });
});

describe('Logger', () => {
  it('writes text with the prefix, json with time/level/event, and respects the level', () => {
    const lines: string[] = [];
    const text = new Logger({ verbosity: 0, write: (line) => lines.push(line) });
    text.info('forward', 'hidden at level 0');
    text.notice('stop', 'shown');
    expect(lines).toEqual(['[gsup] shown\n']);
    lines.length = 0;
    const json = new Logger({ verbosity: 1, format: 'json', write: (line) => lines.push(line) });
    json.info('forward', 'SIGHUP', { signal: 'SIGHUP' });
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'info',
      event: 'forward',
      message: 'SIGHUP',
      signal: 'SIGHUP',
    });
    const quiet = new Logger({ verbosity: -1, write: (line) => lines.push(line) });
    quiet.warn('x', 'no');
    expect(lines).toHaveLength(1);
  });

  it('colour: TTY only, NO_COLOR off, FORCE_COLOR on', () => {
    expect(colorWanted({}, true)).toBe(true);
    expect(colorWanted({}, false)).toBe(false);
    expect(colorWanted({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '0' }, true)).toBe(false);
  });
});
