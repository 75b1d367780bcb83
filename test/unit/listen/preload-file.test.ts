import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  digest,
  installPreload,
  packagedServes,
  preloadSource,
  type PreloadPlaces,
} from '../../../src/engine/listen/preload-file.js';
import { heldByOwners } from '../../../src/platform/trusted-path.js';
import { Logger } from '../../../src/output/log.js';
import { ROOT } from '../../helpers/gsup.js';

// Real folders with real owners and modes: the safe ones under /run (root's, 0755, as gsup's own folder is), the
// unsafe ones in the suite's temp directory (1777, as /tmp). Needs root, as gsup does to write under /run.
const root = process.getuid?.() === 0;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder: under /run (safe: root's all the way, 0755) or in the temp directory (under a sticky 1777). */
function folder(where: 'run' | 'tmp', mode = 0o755): string {
  const dir = mkdtempSync(join(where === 'run' ? '/run' : tmpdir(), 'gsup-unit-'));
  dirs.push(dir);
  chmodSync(dir, mode);
  return realpathSync(dir);
}

const CODE = '// the preload\n';

/** A source bundle of our own (the built one may not be there in a unit run), and a logger that keeps lines. */
function setUp(places: Omit<PreloadPlaces, 'source'> & { source?: 'run' | 'tmp' } = {}) {
  const source = join(folder(places.source ?? 'tmp'), 'listen-preload.cjs');
  writeFileSync(source, CODE, { mode: 0o644 });
  const lines: string[] = [];
  const logger = new Logger({ write: (line) => lines.push(line) });
  const run = places.run ?? folder('run');
  const preload = installPreload(logger, { runtime: undefined, ...places, source, run });
  return { preload, lines, source, run };
}

/** Installed, then a turn of the loop later: each nodeOptions() is a later spawn's (the start's first one takes the
 * install's own check, in the same turn). */
async function installed(places: Parameters<typeof setUp>[0] = {}) {
  const set = setUp(places);
  if (typeof set.preload === 'string') throw new Error(set.preload);
  await new Promise((resolve) => setImmediate(resolve));
  return { ...set, preload: set.preload, path: set.preload.path! };
}

const mode = (path: string) => lstatSync(path).mode & 0o7777;
const named = (run: string) => join(run, 'gsup', `listen-preload-${digest(Buffer.from(CODE))}.cjs`);

describe.runIf(root)('the listen preload file', () => {
  it("is found beside gsup's own bundle, or from source in the package's dist/", () => {
    expect(preloadSource(pathToFileURL('/opt/gsup/dist/cli.cjs').href)).toBe('/opt/gsup/dist/listen-preload.cjs');
    expect(preloadSource(pathToFileURL('/x/node_modules/gsup/dist/index.js').href)).toBe(
      '/x/node_modules/gsup/dist/listen-preload.cjs',
    );
    const fromSource = pathToFileURL(join(ROOT, 'src/engine/listen/preload-file.ts')).href;
    expect(preloadSource(fromSource)).toBe(join(ROOT, 'dist/listen-preload.cjs'));
  });

  it("the package's own file, where its whole path is root's and closed to writers: used as it is", async () => {
    const { preload, source, run, lines } = await installed({ source: 'run' });
    expect(preload.path).toBe(source);
    expect(packagedServes(source)).toBe(true); // what the build's --listen start asks (scripts/code-cache.cjs)
    expect(preload.nodeOptions(undefined)).toBe(`--require "${source}"`);
    expect(readdirSync(run)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('a package under /tmp (sticky, open to all): written as root under /run/gsup, by content, 0755 and 0444', async () => {
    const { preload, run, path, source, lines } = await installed();
    expect(packagedServes(source)).toBe(false);
    expect(path).toBe(named(run));
    expect([mode(dirname(path)), mode(path)]).toEqual([0o755, 0o444]);
    expect(readFileSync(path, 'utf8')).toBe(CODE);
    expect(preload.nodeOptions('--x')).toBe(`--x --require "${path}"`);
    expect(lines).toEqual([]);
    // A second gsup finds it, and writes nothing: the same inode, nothing beside it.
    const inode = lstatSync(path).ino;
    const second = await installed({ run });
    expect(second.path).toBe(path);
    expect(lstatSync(path).ino).toBe(inode);
    expect(readdirSync(dirname(path))).toEqual([`listen-preload-${digest(Buffer.from(CODE))}.cjs`]);
  });

  it("the start's first spawn, in the start's own turn, takes the install's check; a later one looks again", async () => {
    const set = setUp();
    if (typeof set.preload === 'string') throw new Error(set.preload);
    const path = set.preload.path!;
    chmodSync(set.run, 0o777); // opened to all in the same turn: not seen by the spawn the start makes at once
    expect(set.preload.nodeOptions(undefined)).toBe(`--require "${path}"`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(set.preload.nodeOptions(undefined)).toBeUndefined(); // the next spawn looks: open to all, none taken
    expect(set.lines).toHaveLength(1);
    chmodSync(set.run, 0o755);
  });

  it("goes after the app's NODE_OPTIONS, and never into gsup's own", async () => {
    const before = process.env.NODE_OPTIONS;
    const { preload, path } = await installed();
    expect(preload.nodeOptions('--max-old-space-size=300 --require "/app/otel.cjs"')).toBe(
      `--max-old-space-size=300 --require "/app/otel.cjs" --require "${path}"`,
    );
    expect(process.env.NODE_OPTIONS).toBe(before);
  });

  it('removed, or replaced: written again at the same path (runs name it), from the bytes read at start', async () => {
    const { preload, path, source, lines } = await installed();
    rmSync(dirname(path), { recursive: true });
    expect(preload.nodeOptions('--x')).toBe(`--x --require "${path}"`);
    expect(readFileSync(path, 'utf8')).toBe(CODE);
    expect([mode(dirname(path)), mode(path)]).toEqual([0o755, 0o444]);
    expect(lines).toEqual([`[gsup] ${path} is gone: the listen preload is at ${path} again\n`]);
    // Replaced by root with something else (another inode), the source changed too: gsup's own bytes again.
    writeFileSync(source, '// changed\n');
    rmSync(path);
    writeFileSync(path, '// not the preload\n', { mode: 0o444 });
    expect(preload.nodeOptions(undefined)).toBe(`--require "${path}"`);
    expect(readFileSync(path, 'utf8')).toBe(CODE);
    expect(lines[1]).toBe(`[gsup] ${path} was replaced: the listen preload is at ${path} again\n`);
    expect(readdirSync(dirname(path))).toEqual([`listen-preload-${digest(Buffer.from(CODE))}.cjs`]);
  });

  it('written anew with the same bytes (another gsup of this version, started together): taken as it is, no line', async () => {
    const { preload, path, lines } = await installed();
    writeFileSync(`${path}.other`, CODE, { mode: 0o444 });
    renameSync(`${path}.other`, path);
    const inode = lstatSync(path).ino;
    expect(preload.nodeOptions(undefined)).toBe(`--require "${path}"`);
    expect(preload.nodeOptions(undefined)).toBe(`--require "${path}"`);
    expect(lstatSync(path).ino).toBe(inode);
    expect(lines).toEqual([]);
  });

  it('a gsup/ folder of another user is not taken; a root run folder open to all is not used', () => {
    const run = folder('run');
    mkdirSync(join(run, 'gsup'));
    chownSync(join(run, 'gsup'), 65534, 65534);
    const taken = setUp({ run });
    expect(taken.preload).toBe(
      `the package's file: ${dirname(dirname(taken.source))} is writable by others; ` +
        `${run} cannot hold it (${join(run, 'gsup')} is not a directory of uid 0); XDG_RUNTIME_DIR is not set`,
    );
    expect(taken.lines).toEqual([
      `[gsup] no safe place for the listen preload (${taken.preload}): runs start without the preload ` +
        '(Node apps must take the held sockets themselves: LISTEN_FDS)\n',
    ]);
    const open = setUp({ run: folder('run', 0o777) });
    expect(open.preload).toMatch(/ is writable by others\); XDG_RUNTIME_DIR is not set$/);
  });

  it("the user's runtime folder, when /run will not do: its own, 0700; not one that is open", async () => {
    const runtime = folder('run', 0o700);
    const { path } = await installed({ run: folder('run', 0o777), runtime });
    expect(path).toBe(named(runtime));
    chmodSync(runtime, 0o755);
    const open = setUp({ run: folder('run', 0o777), runtime });
    expect(open.preload).toMatch(
      new RegExp(`XDG_RUNTIME_DIR ${runtime} is not a directory of gsup's user with mode 700$`),
    );
  });

  it("when no safe place is left at a spawn, runs start without it: the app's options as given, said once", async () => {
    const { preload, run, lines } = await installed();
    chmodSync(run, 0o777); // now anyone could change it: neither the file nor a new one is trusted
    expect(preload.nodeOptions('--x')).toBe('--x');
    expect(preload.nodeOptions(undefined)).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/is writable by others, and no safe place for it \(.*\): runs start without the preload/);
    chmodSync(run, 0o755); // safe again: the next spawn has it back
    expect(preload.nodeOptions('--x')).toMatch(/^--x --require "/);
  });

  it('a source that cannot be read: why, said once, and no file', () => {
    const lines: string[] = [];
    const logger = new Logger({ write: (line) => lines.push(line) });
    const missing = join(folder('tmp'), 'nothing', 'listen-preload.cjs');
    const result = installPreload(logger, { source: missing, run: folder('run') });
    expect(result).toBe(`the package's file: ${missing} cannot be read (ENOENT); ${missing} cannot be read (ENOENT)`);
    expect(lines).toHaveLength(1);
  });
});

describe.runIf(root)('a path no one but root and gsup’s user can change (heldByOwners)', () => {
  it('every directory from / down theirs, not a link, writable by no one else — sticky or not', () => {
    const safe = folder('run');
    const file = join(safe, 'f');
    writeFileSync(file, 'x', { mode: 0o644 });
    expect(heldByOwners(file, true)).toBeUndefined();
    const sticky = folder('tmp', 0o1777);
    writeFileSync(join(sticky, 'f'), 'x', { mode: 0o644 });
    expect(heldByOwners(join(sticky, 'f'), false)).toBe(`${sticky} is writable by others`);
    chmodSync(safe, 0o775);
    expect(heldByOwners(file, false)).toBe(`${safe} is writable by its group`);
    chmodSync(safe, 0o755);
    chownSync(safe, 65534, 65534);
    expect(heldByOwners(file, false)).toBe(`${safe} belongs to uid 65534`);
    chownSync(safe, 0, 0);
    symlinkSync(file, join(safe, 'link'));
    expect(heldByOwners(join(safe, 'link'), false)).toBe(`${join(safe, 'link')} is not a file`);
    expect(heldByOwners(safe, false)).toBeUndefined();
    chmodSync(safe, 0o750);
    expect(heldByOwners(file, true)).toBe(`${safe} is closed to other users`);
    expect(heldByOwners(file, false)).toBeUndefined();
    expect(heldByOwners(join(safe, 'none'), false)).toBe(`${join(safe, 'none')} cannot be read (ENOENT)`);
  });
});
