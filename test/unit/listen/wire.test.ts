import { describe, expect, it } from 'vitest';
import { parseReport, parseTell, reportLine, tellLine } from '../../../src/engine/listen/wire.js';

// The report channel's words, both ways (engine/listen/wire.ts): what the preload says, and what gsup tells it.

describe('the report channel: words both ways', () => {
  it("the preload's words read back as said; anything else is no word", () => {
    const words = [
      { word: 'listen', name: 'web', pid: 42 },
      { word: 'close', name: 'web', pid: 42 },
      { word: 'conns', pid: 42, count: 3 },
      { word: 'conns', pid: 42, count: 0 },
    ] as const;
    for (const word of words) expect(parseReport(reportLine(word).trimEnd())).toEqual(word);
    for (const line of [
      '{"word":"conns","pid":42,"count":-1}',
      '{"word":"conns","pid":42}',
      '{"word":"conns","pid":"42","count":1}',
      '{"word":"listen","pid":42}',
      '{"word":"drain","pid":42}',
      'conns 3',
      'null',
    ])
      expect(parseReport(line), line).toBeUndefined();
  });

  it("gsup's words: drain and closing, one a line; anything else is none", () => {
    expect(tellLine('drain')).toBe('{"word":"drain"}\n');
    expect(parseTell(tellLine('drain').trimEnd())).toBe('drain');
    expect(parseTell(tellLine('closing').trimEnd())).toBe('closing');
    for (const line of ['{"word":"listen"}', '{"word":"__proto__"}', 'drain', '', '{}', 'null'])
      expect(parseTell(line), line).toBeUndefined();
  });
});
