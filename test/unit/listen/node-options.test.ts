import { describe, expect, it } from 'vitest';
import { quoteNodeOption, requires, splitNodeOptions, withPreload } from '../../../src/engine/listen/node-options.js';

describe('NODE_OPTIONS as Node reads it', () => {
  it.each([
    ['--a --b', ['--a', '--b']],
    ['  --a   --b  ', ['--a', '--b']],
    ['--require "/x y/z.cjs"', ['--require', '/x y/z.cjs']],
    ['--require "/a \\"b\\" \\\\c"', ['--require', '/a "b" \\c']],
    ['--title=a"b c"d', ['--title=ab cd']],
    ['--x=a\\b', ['--x=a\\b']], // a backslash outside quotes is itself
    ['', []],
  ])('%j splits into %j', (value, args) => {
    expect(splitNodeOptions(value)).toEqual(args);
  });

  it.each(['--require "/x', '--require "/x\\'])('%j is refused, as Node refuses it', (value) => {
    expect(splitNodeOptions(value)).toBeUndefined();
  });

  it('a quoted value reads back as itself, whatever it holds', () => {
    for (const value of ['/tmp/gsup-preload-x/listen-preload.cjs', '/a b/c', '/q"uo"te', '/back\\slash\\', 'é ü']) {
      expect(splitNodeOptions(`--require ${quoteNodeOption(value)}`)).toEqual(['--require', value]);
    }
  });

  it("the preload goes after the app's own options, which stay as they were", () => {
    const path = '/tmp/gsup-preload-ab/listen-preload.cjs';
    expect(withPreload(undefined, path)).toBe(`--require "${path}"`);
    expect(withPreload('  ', path)).toBe(`--require "${path}"`);
    expect(withPreload('--max-old-space-size=200 -r "/otel x.cjs"', path)).toBe(
      `--max-old-space-size=200 -r "/otel x.cjs" --require "${path}"`,
    );
  });

  it('is not added twice, and options Node would refuse are left for Node to refuse', () => {
    const path = '/p/listen-preload.cjs';
    for (const given of [`--require ${path}`, `-r "${path}"`, `--require=${path}`, `--a --require "${path}" --b`]) {
      expect(requires(given, path)).toBe(true);
      expect(withPreload(given, path)).toBe(given);
    }
    expect(requires('--require /p/other.cjs', path)).toBe(false);
    expect(withPreload('--inspect "', path)).toBe('--inspect "');
  });
});
