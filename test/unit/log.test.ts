import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { escapeControls, Logger } from '../../src/log.js';
import { raisedOwnSigpipe, takeOwnSigpipe } from '../../src/platform/sigpipe.js';

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

  it('text: one line, no control character, no forged [gsup] line', () => {
    const { lines, logger } = capture({});
    logger.notice('stopped', `stopped in 5ms: 0 exited by themselves, 1 killed: 42 (${FORGED})`);
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

describe('own SIGPIPEs', () => {
  it('each counted one is taken once', () => {
    expect(takeOwnSigpipe()).toBe(false);
    raisedOwnSigpipe();
    raisedOwnSigpipe();
    expect([takeOwnSigpipe(), takeOwnSigpipe(), takeOwnSigpipe()]).toEqual([true, true, false]);
  });
});
