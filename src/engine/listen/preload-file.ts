import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../../output/log.js';
import { moduleFile } from '../../platform/builtins.js';
import { heldByOwners } from '../../platform/trusted-path.js';
import { withPreload } from './node-options.js';

// The listen preload's file in gsup: found or written at start, checked before each later spawn (the start's
// first, in the same turn, takes the start's own check), named in the command's NODE_OPTIONS. How it is meant to
// be called (gsup's wiring, under --listen unless --no-listen-preload; never on the path of a start without
// --listen: it loads nothing by itself):
//
//   const preload = installPreload(logger);        // once, at start: a PreloadFile, or why not (said already)
//   // before each spawn of a run, in the command's environment only (never gsup's own process.env):
//   env.NODE_OPTIONS = typeof preload === 'string' ? env.NODE_OPTIONS : preload.nodeOptions(env.NODE_OPTIONS);
//   // (undefined: delete env.NODE_OPTIONS)
//
// The path is trusted code for every Node process of the tree, root ones included, for as long as any of them
// lives, and each hands it on to the Node children it starts. So it names a file that no user but root and
// gsup's own can create, replace or remove (every directory from / down theirs, writable by no one else: never
// /tmp, where a name that is gone can be taken by anyone), and nothing removes it: not gsup's end, whatever the
// tree does then. Where, the first that qualifies:
//   1. the package's own dist/listen-preload.cjs (a global install by root), nothing written;
//   2. for root, /run/gsup/listen-preload-<digest>.cjs (0755, 0444): written once per content, beside and
//      renamed, never removed (/run is cleared at boot); outside any private /tmp a command may have;
//   3. $XDG_RUNTIME_DIR/gsup/ the same, when that folder is the user's own, 0700, on a path that qualifies;
//   none: one line, and runs start without the preload (an app may still take LISTEN_FDS itself).
// 1 and 2 must be readable by every user (an app may drop to another); 3 is the user's alone.

/** The preload's file, ready to be named in a command's NODE_OPTIONS. */
export interface PreloadFile {
  /** The file now (a realpath: the preload compares it with its own __filename); undefined when there is none. */
  readonly path: string | undefined;
  /**
   * The command's NODE_OPTIONS: the app's, then `--require "<path>"`. The file and its path are checked first
   * (the same inode, owners, modes); one that was changed or removed is found or written again, or, when that
   * fails, left out with one line (the app starts, without the preload): the app's options come back as given.
   */
  nodeOptions(appNodeOptions: string | undefined): string | undefined;
}

export interface PreloadPlaces {
  /** The bundle; by default the package's dist/listen-preload.cjs, beside gsup's own bundle. */
  source?: string;
  /** Where root writes its gsup/ folder; by default /run. */
  run?: string;
  /** The user's runtime folder; by default $XDG_RUNTIME_DIR. */
  runtime?: string;
}

/**
 * dist/listen-preload.cjs of gsup's own package, found from this module's place and nowhere else: the bundle
 * this code runs in (dist/cli.cjs, dist/index.js), or src/engine/listen/ when run from source (the tests).
 */
export function preloadSource(moduleUrl: string): string {
  const here = dirname(moduleFile(moduleUrl));
  const fromSource = basename(here) === 'listen' && basename(dirname(dirname(here))) === 'src';
  return join(fromSource ? dirname(dirname(dirname(here))) : here, fromSource ? 'dist' : '', 'listen-preload.cjs');
}

/** Where the file is, as it was found: what each check compares. */
interface Place {
  path: string;
  dev: number;
  ino: number;
  /** With the inode: a file that root or gsup's user wrote anew under the same inode number is seen too. */
  size: number;
  ctimeMs: number;
  /** Whether every user must be able to load it (1 and 2), or gsup's own user alone (3). */
  readable: boolean;
  /** What gsup wrote there (2 and 3). */
  code?: Buffer;
}

/**
 * 16 hex digits that tell one preload's content from another's (FNV-1a, two lanes): it names the file. Not what
 * keeps it safe (its owners do), so no cryptographic hash: node:crypto's first use costs ~2 ms.
 */
export function digest(code: Buffer): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let index = 0; index < code.length; index++) {
    a = Math.imul(a ^ code[index], 0x01000193);
    b = Math.imul(b ^ code[index], 0x01000193) ^ (b >>> 15);
  }
  return [a, b].map((lane) => (lane >>> 0).toString(16).padStart(8, '0')).join('');
}

const reason = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error);

function placed(path: string, readable: boolean, code?: Buffer): Place | string {
  const why = heldByOwners(path, readable);
  if (why !== undefined) return why;
  const { dev, ino, size, ctimeMs } = lstatSync(path);
  return { path, dev, ino, size, ctimeMs, readable, code };
}

/** 1: the package's own file, where its whole path qualifies. */
function packaged(source: string): Place | string {
  try {
    return placed(realpathSync.native(source), true);
  } catch (error) {
    return `${source} cannot be read (${reason(error)})`;
  }
}

/** Whether runs name the package's own file as it is (1: nothing written). The build asks: scripts/code-cache.cjs. */
export function packagedServes(source = preloadSource(import.meta.url)): boolean {
  return typeof packaged(source) === 'object';
}

/**
 * 2 and 3: `code` in base/gsup/, under a name of its content: found there (gsup's user's, 0444, its size), or
 * written beside it and renamed, so that the name never holds part of a file. The folder is made 0755 when it is
 * gsup's user's (no one else could have changed what is in it since: a stranger's entry is not taken).
 */
function written(base: string, code: Buffer, readable: boolean): Place | string {
  const uid = process.geteuid?.();
  let beside: string | undefined;
  try {
    const folder = join(realpathSync.native(base), 'gsup');
    try {
      mkdirSync(folder, { mode: 0o755 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const own = lstatSync(folder);
    if (!own.isDirectory() || own.uid !== uid)
      return `${base} cannot hold it (${folder} is not a directory of uid ${uid})`;
    if ((own.mode & 0o7777) !== 0o755) chmodSync(folder, 0o755);
    const open = heldByOwners(folder, readable);
    if (open !== undefined) return `${base} cannot hold it (${open})`;
    const path = join(folder, `listen-preload-${digest(code)}.cjs`);
    const found = lstatSync(path, { throwIfNoEntry: false });
    if (!found?.isFile() || found.uid !== uid || (found.mode & 0o7777) !== 0o444 || found.size !== code.length) {
      beside = `${path}.${process.pid}.new`;
      rmSync(beside, { force: true });
      writeFileSync(beside, code, { mode: 0o444, flag: 'wx' });
      chmodSync(beside, 0o444);
      renameSync(beside, path);
    }
    const done = placed(path, readable, code);
    return typeof done === 'string' ? `${base} cannot hold it (${done})` : done;
  } catch (error) {
    if (beside) rmSync(beside, { force: true });
    return `${base} cannot hold it (${reason(error)})`;
  }
}

/** Why `base` is not the user's own runtime folder (theirs, 0700: XDG's rule), or undefined. */
function notRuntime(base: string | undefined): string | undefined {
  if (!base) return 'XDG_RUNTIME_DIR is not set';
  let stat;
  try {
    stat = lstatSync(base, { throwIfNoEntry: false });
  } catch (error) {
    return `XDG_RUNTIME_DIR ${base} cannot be read (${reason(error)})`;
  }
  if (!stat?.isDirectory() || stat.uid !== process.geteuid?.() || (stat.mode & 0o7777) !== 0o700) {
    return `XDG_RUNTIME_DIR ${base} is not a directory of gsup's user with mode 700`;
  }
  return undefined;
}

/**
 * Why the file at `place` is not what was found there (removed, replaced, its path opened to others), or
 * undefined; or the place again, when another gsup of the same version wrote the same bytes there anew (two root
 * gsups that started together would otherwise write it again in turn at every spawn).
 */
function changed(place: Place): string | Place | undefined {
  let stat;
  try {
    stat = lstatSync(place.path, { throwIfNoEntry: false });
  } catch (error) {
    return `${place.path} cannot be read (${reason(error)})`;
  }
  if (!stat) return `${place.path} is gone`;
  const open = heldByOwners(place.path, place.readable);
  if (open !== undefined) return open;
  const same = stat.dev === place.dev && stat.ino === place.ino && stat.size === place.size;
  if (same && stat.ctimeMs === place.ctimeMs) return undefined;
  try {
    if (place.code && stat.uid === process.geteuid?.() && readFileSync(place.path).equals(place.code)) {
      return placed(place.path, place.readable, place.code);
    }
  } catch {
    // read below as replaced
  }
  return `${place.path} was replaced`;
}

class Installed implements PreloadFile {
  private said = false;
  private code: Buffer | undefined;
  /** Found and checked in this very turn of the loop (the start's): the first spawn, in the same turn, takes it so. */
  checkedNow = false;

  constructor(
    private readonly logger: Logger,
    private readonly places: Required<Omit<PreloadPlaces, 'runtime'>> & Pick<PreloadPlaces, 'runtime'>,
  ) {}

  /** Where runs find it now (set at start, then by each spawn's check); undefined: none. */
  place: Place | undefined;

  get path(): string | undefined {
    return this.place?.path;
  }

  /** The first place that qualifies, in the order above; or why none does. */
  choose(): Place | string {
    const refused: string[] = [];
    const found = packaged(this.places.source);
    if (typeof found === 'object') return found;
    refused.push(`the package's file: ${found}`);
    // gsup's own bytes, read once: what was changed on disk since is never what is written again.
    try {
      this.code ??= readFileSync(this.places.source);
    } catch (error) {
      return `${refused[0]}; ${this.places.source} cannot be read (${reason(error)})`;
    }
    if (process.geteuid?.() === 0) {
      const run = written(this.places.run, this.code, true);
      if (typeof run === 'object') return run;
      refused.push(run);
    }
    const runtime = this.places.runtime;
    const why = notRuntime(runtime) ?? written(runtime!, this.code, false);
    if (typeof why === 'object') return why;
    refused.push(why);
    return refused.join('; ');
  }

  nodeOptions(appNodeOptions: string | undefined): string | undefined {
    const why = !this.place ? 'there is no listen preload' : this.checkedNow ? undefined : changed(this.place);
    if (typeof why === 'object') this.place = why;
    if (why === undefined || typeof why === 'object') return withPreload(appNodeOptions, this.place!.path);
    const again = this.choose();
    if (typeof again === 'string') {
      this.place = undefined;
      if (!this.said) this.logger.warn('listen-preload', `${why}, and no safe place for it (${again}): ${WITHOUT}`);
      this.said = true;
      return appNodeOptions;
    }
    this.said = false;
    this.logger.warn('listen-preload', `${why}: the listen preload is at ${again.path} again`, { path: again.path });
    this.place = again;
    return withPreload(appNodeOptions, again.path);
  }
}

const WITHOUT = 'runs start without the preload (Node apps must take the held sockets themselves: LISTEN_FDS)';

/**
 * The listen preload, where no user but root and gsup's own can change it. Returns the file, or why there is
 * none, said once on the logger already (the app then starts without it).
 */
export function installPreload(logger: Logger, places: PreloadPlaces = {}): PreloadFile | string {
  const installed = new Installed(logger, {
    source: places.source ?? preloadSource(import.meta.url),
    run: places.run ?? '/run',
    runtime: 'runtime' in places ? places.runtime : process.env.XDG_RUNTIME_DIR,
  });
  const place = installed.choose();
  if (typeof place === 'string') {
    logger.warn('listen-preload', `no safe place for the listen preload (${place}): ${WITHOUT}`);
    return place;
  }
  installed.place = place;
  // The start spawns its first run in this same turn: that spawn needs no second look (~0.4 ms); any later one does.
  installed.checkedNow = true;
  process.nextTick(() => (installed.checkedNow = false));
  logger.debug('listen-preload', `listen preload at ${place.path}`, { path: place.path });
  return installed;
}
