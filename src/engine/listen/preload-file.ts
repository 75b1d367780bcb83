import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../log.js';
import { writableByOthers } from '../../platform/trusted-path.js';
import { withPreload } from './node-options.js';

// The listen preload's file in gsup: copied at start, checked before each spawn, named in the command's
// NODE_OPTIONS, removed at the end. How it is meant to be called (gsup's wiring, under --listen unless
// --no-listen-preload; never on the path of a start without --listen: it loads nothing by itself):
//
//   const preload = installPreload(logger);        // once, at start: a PreloadFile, or why not (said already)
//   // before each spawn of a run, in the command's environment only (never gsup's own process.env):
//   env.NODE_OPTIONS = typeof preload === 'string' ? env.NODE_OPTIONS : preload.nodeOptions(env.NODE_OPTIONS);
//   // (undefined: delete env.NODE_OPTIONS)
//   preload.remove();                              // at gsup's end
//
// Why a copy: a root process of the tree loads it (every Node process of a run does), so it must sit where no
// other user can change it — not in an app's node_modules an app user owns, nor in a file a later `npm install`
// replaces under a running gsup.

/** The preload's copy, ready to be named in a command's NODE_OPTIONS. */
export interface PreloadFile {
  /** The copy now (a realpath: the preload compares it with its own __filename); undefined when there is none. */
  readonly path: string | undefined;
  /**
   * The command's NODE_OPTIONS: the app's, then `--require "<path>"`. The copy is checked first (the same
   * inode, unchanged mode, readable by all); one that was changed or removed is copied again, or, when that
   * fails, left out with one line (the app starts, without the preload): the app's options come back as given.
   */
  nodeOptions(appNodeOptions: string | undefined): string | undefined;
  /** Removes the copy and its folder (at gsup's end); idempotent. */
  remove(): void;
}

export interface PreloadPlaces {
  /** The bundle to copy; by default the package's dist/listen-preload.cjs, beside gsup's own bundle. */
  source?: string;
  /** Folders to make the copy's folder in, best first; by default $TMPDIR (or /tmp), then /dev/shm. */
  folders?: string[];
}

/**
 * dist/listen-preload.cjs of gsup's own package, found from this module's place and nowhere else: the bundle
 * this code runs in (dist/cli.cjs, dist/index.js), or src/engine/listen/ when run from source (the tests).
 */
export function preloadSource(moduleUrl: string): string {
  const here = dirname(fileURLToPath(moduleUrl));
  const fromSource = basename(here) === 'listen' && basename(dirname(dirname(here))) === 'src';
  return join(fromSource ? dirname(dirname(dirname(here))) : here, fromSource ? 'dist' : '', 'listen-preload.cjs');
}

/** The temporary folder ($TMPDIR, else /tmp), then /tmp, then /dev/shm. */
function temporaryFolders(): string[] {
  return [...new Set([tmpdir(), '/tmp', '/dev/shm'])];
}

/** Why a user other than gsup's could not load the file at `path` (a realpath): a folder above it it cannot enter. */
function closedToOthers(path: string): string | undefined {
  for (let current = dirname(path); ; current = dirname(current)) {
    if ((lstatSync(current).mode & 0o001) === 0) return `${current} cannot be entered by other users`;
    if (dirname(current) === current) return undefined;
  }
}

interface Copy {
  path: string;
  folder: string;
  dev: number;
  ino: number;
}

/** `code` written to `path` in gsup's own `folder` (0444), checked: the copy, or an error thrown. */
function writeCopy(code: Buffer, folder: string, path: string): Copy {
  writeFileSync(path, code, { mode: 0o444, flag: 'wx' });
  chmodSync(path, 0o444);
  const why = writableByOthers(path) ?? closedToOthers(path);
  if (why !== undefined) throw new Error(why);
  const stat = lstatSync(path);
  return { path, folder, dev: stat.dev, ino: stat.ino };
}

/** A fresh copy of `code` in a new folder of one of `folders` (0755, the file 0444), or why none could be had. */
function copyInto(code: Buffer, folders: readonly string[]): Copy | string {
  const refused: string[] = [];
  for (const base of folders) {
    let folder: string | undefined;
    try {
      folder = mkdtempSync(join(realpathSync(base), 'gsup-preload-'));
      chmodSync(folder, 0o755);
      return writeCopy(code, folder, join(folder, 'listen-preload.cjs'));
    } catch (error) {
      if (folder) rmSync(folder, { recursive: true, force: true });
      refused.push(`${base}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return `no folder for the listen preload (${refused.join('; ')})`;
}

/**
 * `code` again at the copy's own path: the processes of a run name it in their NODE_OPTIONS, and one that starts
 * a Node child later hands that on (a path that is gone would stop the child: Node refuses a --require it cannot
 * load). Written beside it and renamed over it, so that no moment lacks it. The folder must be gsup's own: one that
 * was removed is made again (mkdir fails where someone else made it first). Throws when it cannot be done.
 */
function copyAgain(code: Buffer, copy: Copy): Copy {
  const folder = lstatSync(copy.folder, { throwIfNoEntry: false });
  if (!folder) mkdirSync(copy.folder, { mode: 0o755 });
  else if (!folder.isDirectory() || folder.uid !== process.geteuid?.()) throw new Error(`${copy.folder} is not gsup's`);
  chmodSync(copy.folder, 0o755);
  const beside = `${copy.path}.new`;
  rmSync(beside, { force: true });
  try {
    const fresh = writeCopy(code, copy.folder, beside);
    renameSync(beside, copy.path);
    return { ...fresh, path: copy.path };
  } catch (error) {
    rmSync(beside, { force: true });
    throw error;
  }
}

/** Why the copy is not what was written (removed, replaced, its mode changed), or undefined. */
function changed(copy: Copy): string | undefined {
  try {
    const stat = lstatSync(copy.path);
    if (stat.dev !== copy.dev || stat.ino !== copy.ino) return `${copy.path} was replaced`;
    if ((stat.mode & 0o777) !== 0o444) return `${copy.path} has mode ${(stat.mode & 0o777).toString(8)}`;
    if ((lstatSync(copy.folder).mode & 0o777) !== 0o755) return `${copy.folder}'s mode was changed`;
    return writableByOthers(copy.path);
  } catch (error) {
    return `${copy.path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
}

/**
 * A copy that was written: `copy`, undefined once it is gone and could not be had again; `home`, the path runs
 * name, kept while it can be written again.
 */
class Installed implements PreloadFile {
  private said = false;
  private removed = false;
  private home: Copy;
  /** The folders gsup made: removed at its end (while they are still its own). */
  private readonly made = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly code: Buffer,
    private readonly folders: readonly string[],
    private copy: Copy | undefined,
  ) {
    this.home = copy!;
    this.made.add(this.home.folder);
  }

  get path(): string | undefined {
    return this.copy?.path;
  }

  nodeOptions(appNodeOptions: string | undefined): string | undefined {
    if (this.removed) return appNodeOptions;
    const why = this.copy ? changed(this.copy) : 'there is no copy of the listen preload';
    if (why === undefined) return withPreload(appNodeOptions, this.copy!.path);
    // gsup's own bytes, read at start: what was changed on disk is never what is copied again. At the same path
    // when it can be (processes of runs name it), else in a new folder.
    const fresh = this.again() ?? copyInto(this.code, this.folders);
    if (typeof fresh === 'string') {
      this.copy = undefined;
      if (!this.said) this.logger.warn('listen-preload', `${why}, and ${fresh}: runs start without the preload`);
      this.said = true;
      return appNodeOptions;
    }
    const where =
      fresh.path === this.home.path ? `at ${fresh.path}` : `to ${fresh.path} (${this.home.folder} cannot be had again)`;
    [this.copy, this.home, this.said] = [fresh, fresh, false];
    this.made.add(fresh.folder);
    this.logger.warn('listen-preload', `${why}: the listen preload was copied again, ${where}`);
    return withPreload(appNodeOptions, fresh.path);
  }

  /** The copy written again at the path runs name, or undefined. */
  private again(): Copy | undefined {
    try {
      return copyAgain(this.code, this.home);
    } catch (error) {
      this.logger.debug('listen-preload', `${this.home.path} not written again (${String(error)})`);
      return undefined;
    }
  }

  /** The folders go (gsup's, 0755: no one else can have put anything in them), once no run is left to name them. */
  remove(): void {
    this.removed = true;
    this.copy = undefined;
    for (const folder of this.made) {
      try {
        const stat = lstatSync(folder, { throwIfNoEntry: false });
        if (stat?.isDirectory() && stat.uid === process.geteuid?.()) rmSync(folder, { recursive: true });
      } catch (error) {
        this.logger.debug('listen-preload', `${folder} not removed (${String(error)})`);
      }
    }
    this.made.clear();
  }
}

/**
 * Copies the listen preload into a folder gsup owns, on a path no other user can change. Returns the copy, or
 * why there is none, said once on the logger already (the app then starts without it).
 */
export function installPreload(logger: Logger, places: PreloadPlaces = {}): PreloadFile | string {
  const source = places.source ?? preloadSource(import.meta.url);
  const folders = places.folders ?? temporaryFolders();
  let code: Buffer;
  try {
    code = readFileSync(source);
  } catch (error) {
    const why = `the listen preload ${source} cannot be read (${(error as NodeJS.ErrnoException).code})`;
    logger.warn('listen-preload', `${why}: Node apps must take the held sockets themselves (LISTEN_FDS)`);
    return why;
  }
  const copy = copyInto(code, folders);
  if (typeof copy === 'string') {
    logger.warn('listen-preload', `${copy}: Node apps must take the held sockets themselves (LISTEN_FDS)`);
    return copy;
  }
  logger.debug('listen-preload', `listen preload at ${copy.path}`, { path: copy.path });
  return new Installed(logger, code, folders, copy);
}
