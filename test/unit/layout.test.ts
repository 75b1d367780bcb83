import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/gsup.js';

// One concern per file: no file of src/ grows past 300 lines (the layering itself is `npm run lint:layers`).
const MAX_LINES = 300;
// One concern per room: a newcomer who opens a folder sees its story at a glance.
const MAX_ROOM = 12;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('layout', () => {
  it(`no file in src/ is over ${MAX_LINES} lines`, () => {
    const files = sources(join(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(20);
    const long = files
      .map((path) => [relative(ROOT, path), readFileSync(path, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it(`no room (folder) of src/ holds more than ${MAX_ROOM} files: a room that grows splits along its seams`, () => {
    const rooms = new Map<string, number>();
    for (const path of sources(join(ROOT, 'src'))) {
      const room = relative(ROOT, dirname(path));
      rooms.set(room, (rooms.get(room) ?? 0) + 1);
    }
    expect(rooms.size).toBeGreaterThan(10);
    expect([...rooms].filter(([, files]) => files > MAX_ROOM)).toEqual([]);
  });

  it('no line in src/ is wider than 120 characters (the formatter breaks code; comments and strings by hand)', () => {
    const wide = sources(join(ROOT, 'src')).flatMap((path) =>
      readFileSync(path, 'utf8')
        .split('\n')
        .flatMap((line, index) => ([...line].length > 120 ? [`${relative(ROOT, path)}:${index + 1}`] : [])),
    );
    expect(wide).toEqual([]);
  });

  it('the shell asks, the step decides: no file outside engine/machine/ reads the phase', () => {
    const machine = join(ROOT, 'src', 'engine', 'machine');
    const readers = sources(join(ROOT, 'src'))
      .filter((path) => !path.startsWith(machine + '/'))
      .flatMap((path) =>
        readFileSync(path, 'utf8')
          .split('\n')
          .flatMap((line, index) =>
            /\.phase\b|\{[^}]*\bphase\b[^}]*\}\s*=/.test(line) ? [`${relative(ROOT, path)}:${index + 1}`] : [],
          ),
      );
    expect(readers).toEqual([]);
  });

  it('docs/internals.md names every file of engine/, platform/, cli/ and output/, and only files that exist', () => {
    const page = readFileSync(join(ROOT, 'docs', 'internals.md'), 'utf8');
    const named = new Set([...page.matchAll(/`([\w./-]+\.ts)`/g)].map((match) => match[1]));
    const missing = [...named].filter((path) => !existsSync(join(ROOT, path.startsWith('test/') ? '' : 'src', path)));
    expect(missing).toEqual([]);
    const rooms = ['engine', 'platform', 'cli', 'output'].flatMap((room) => sources(join(ROOT, 'src', room)));
    const unnamed = rooms.map((path) => relative(join(ROOT, 'src'), path)).filter((path) => !named.has(path));
    expect(unnamed).toEqual([]);
  });
});
