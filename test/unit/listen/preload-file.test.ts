import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { installPreload, preloadSource, type PreloadFile } from '../../../src/engine/listen/preload-file.js';
import { Logger } from '../../../src/log.js';
import { ROOT } from '../../helpers/gsup.js';

const dirs: string[] = [];
const copies: PreloadFile[] = [];
afterEach(() => {
  for (const copy of copies.splice(0)) copy.remove();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
  dirs.push(dir);
  chmodSync(dir, mode);
  return realpathSync(dir);
}

/** A source bundle of our own (the built one may not be there in a unit run), and a logger that keeps lines. */
function setUp(folders?: string[]) {
  const source = join(folder(), 'listen-preload.cjs');
  writeFileSync(source, '// the preload\n');
  const lines: string[] = [];
  const logger = new Logger({ write: (line) => lines.push(line) });
  const preload = installPreload(logger, { source, folders: folders ?? [folder()] });
  if (typeof preload === 'string') throw new Error(preload);
  copies.push(preload);
  return { preload, lines, path: preload.path!, warnings: () => lines };
}

const mode = (path: string) => lstatSync(path).mode & 0o7777;

describe('the listen preload file', () => {
  it("is found beside gsup's own bundle, or from source in the package's dist/", () => {
    expect(preloadSource(pathToFileURL('/opt/gsup/dist/cli.cjs').href)).toBe('/opt/gsup/dist/listen-preload.cjs');
    expect(preloadSource(pathToFileURL('/x/node_modules/gsup/dist/index.js').href)).toBe(
      '/x/node_modules/gsup/dist/listen-preload.cjs',
    );
    const fromSource = pathToFileURL(join(ROOT, 'src/engine/listen/preload-file.ts')).href;
    expect(preloadSource(fromSource)).toBe(join(ROOT, 'dist/listen-preload.cjs'));
  });

  it('is copied into a folder of its own (0755), the file 0444, on a path no other user can change', () => {
    const { preload, path } = setUp();
    expect(mode(dirname(path))).toBe(0o755);
    expect(mode(path)).toBe(0o444);
    expect(realpathSync(path)).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe('// the preload\n');
    expect(preload.nodeOptions(undefined)).toBe(`--require "${path}"`);
  });

  it("goes after the app's NODE_OPTIONS, and never into gsup's own", () => {
    const before = process.env.NODE_OPTIONS;
    const { preload, path } = setUp();
    expect(preload.nodeOptions('--max-old-space-size=300 --require "/app/otel.cjs"')).toBe(
      `--max-old-space-size=300 --require "/app/otel.cjs" --require "${path}"`,
    );
    expect(process.env.NODE_OPTIONS).toBe(before);
  });

  it('a folder others can write to is passed over for the next one', () => {
    const open = folder(0o777);
    const { path, lines } = setUp([open, folder()]);
    expect(path.startsWith(open)).toBe(false);
    expect(existsSync(open) && lstatSync(open).isDirectory()).toBe(true);
    expect(lines.filter((line) => line.includes('warn'))).toEqual([]);
  });

  it('removed, replaced or made unreadable: copied again at the same path (runs name it), with one line', () => {
    const { preload, path, warnings } = setUp();
    rmSync(dirname(path), { recursive: true });
    expect(preload.nodeOptions('--x')).toBe(`--x --require "${path}"`);
    expect(preload.path).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe('// the preload\n');
    expect([mode(dirname(path)), mode(path)]).toEqual([0o755, 0o444]);
    expect(warnings()).toEqual([
      `[gsup] ${path} cannot be read (ENOENT): the listen preload was copied again, at ${path}\n`,
    ]);
    chmodSync(path, 0o000);
    expect(preload.nodeOptions('--x')).toBe(`--x --require "${path}"`);
    expect(warnings()[1]).toMatch(/has mode 0: the listen preload was copied again, at /);
    // Replaced by something else (another inode): gsup's own bytes again, nothing left beside it.
    rmSync(path, { force: true });
    writeFileSync(path, '// not the preload\n', { mode: 0o444 });
    expect(preload.nodeOptions(undefined)).toBe(`--require "${path}"`);
    expect(readFileSync(path, 'utf8')).toBe('// the preload\n');
    expect(warnings()[2]).toMatch(/was replaced: the listen preload was copied again, at /);
    expect(readdirSync(dirname(path))).toEqual(['listen-preload.cjs']);
  });

  it('its folder taken by something not gsup’s: a new folder, said with the old one; both gone at the end', () => {
    const { preload, path, warnings } = setUp();
    rmSync(dirname(path), { recursive: true });
    writeFileSync(dirname(path), 'squatter'); // as another user's file there would be
    const options = preload.nodeOptions('--x');
    expect(preload.path).not.toBe(path);
    expect(options).toBe(`--x --require "${preload.path}"`);
    expect(warnings()).toEqual([
      `[gsup] ${path} cannot be read (ENOTDIR): the listen preload was copied again, to ${preload.path} ` +
        `(${dirname(path)} cannot be had again)\n`,
    ]);
    const moved = preload.path!;
    preload.remove();
    expect(existsSync(dirname(moved))).toBe(false);
    expect(readFileSync(dirname(path), 'utf8')).toBe('squatter'); // not gsup's: left alone
  });

  it("when no copy can be had again, runs start without it: the app's options as given, said once", () => {
    const base = folder();
    const { preload, warnings } = setUp([base]);
    chmodSync(base, 0o777); // now anyone could change it: neither the copy nor a new one is trusted
    expect(preload.nodeOptions('--x')).toBe('--x');
    expect(preload.nodeOptions(undefined)).toBeUndefined();
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatch(/is writable by others, and no folder for the listen preload .*: runs start without/);
    chmodSync(base, 0o755); // trusted again: the next spawn has it back
    expect(preload.nodeOptions('--x')).toMatch(/^--x --require "/);
  });

  it('removed at the end, folder and all; then runs get no preload', () => {
    const { preload, path } = setUp();
    preload.remove();
    expect(existsSync(dirname(path))).toBe(false);
    expect(preload.nodeOptions('--x')).toBe('--x');
    preload.remove();
  });

  it('a source that cannot be read: why, said once, and no copy', () => {
    const lines: string[] = [];
    const logger = new Logger({ write: (line) => lines.push(line) });
    const missing = join(folder(), 'nothing', 'listen-preload.cjs');
    const result = installPreload(logger, { source: missing, folders: [folder()] });
    expect(result).toBe(`the listen preload ${missing} cannot be read (ENOENT)`);
    expect(lines).toHaveLength(1);
  });
});
