import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { buildSync } from 'esbuild';
import { ROOT, ownPlace } from './gsup.js';
import { machineTempDir, testFolder } from './temp-folders.js';

// What a process run as another user (uid 65534: setpriv, a preload's helper that drops) must read, copied where
// that user can reach it. The checkout may sit under a folder only its owner can enter (`mktemp -d` makes 0700
// folders; /root, a home directory), and that user cannot read a file in it, whatever the file's own mode.
// The copy (hard links where the files allow) is laid out as the checkout is (fixtures/, bin/, dist/,
// node_modules/, package.json), in a folder of mode 0755 that only root can change (gsup takes a pm2 CLI only from such a place: src/engine/pm2/pm2-cli.ts),
// and is removed after the test that made it, whether it passed or failed (helpers/temp-folders.ts).

export interface ForAnyone {
  /** The copy's folder. */
  readonly path: string;
  /** The copy's bin/gsup.cjs (with `gsup: true`). */
  readonly gsup: string;
  fixture(name: string): string;
  /** A package's command, as node_modules/.bin names it. */
  bin(name: string): string;
  /** Removes it now (it is removed after the test anyway). */
  remove(): void;
}

export interface AnyoneNeeds {
  /** Fixtures, by name. */
  fixtures?: string[];
  /** gsup as built (bin/, dist/) with what it loads at run time (koffi). */
  gsup?: boolean;
  /** Packages of node_modules, with every package they need. */
  packages?: string[];
  /** Modules bundled whole (esbuild) by file name: their source, whose imports are resolved from the checkout. */
  bundles?: Record<string, string>;
}

/** A copy of what another user must read, where that user can reach it. */
export function forAnyone(needs: AnyoneNeeds): ForAnyone {
  const path = testFolder('gsup-anyone-', reachableTempDir());
  ownPlace(path);
  copy('package.json', path); // "type": "module", as the fixtures expect
  mkdirSync(join(path, 'fixtures'));
  for (const name of needs.fixtures ?? []) copy(join('fixtures', name), path);
  const packages = [...(needs.packages ?? [])];
  if (needs.gsup) {
    for (const part of ['bin', 'dist']) copy(part, path);
    packages.push('koffi');
  }
  copyPackages(packages, path);
  for (const [name, source] of Object.entries(needs.bundles ?? {})) {
    buildSync({
      stdin: { contents: source, resolveDir: ROOT, sourcefile: name, loader: 'ts' },
      outfile: join(path, name),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['koffi'],
      logLevel: 'warning',
    });
    chmodSync(join(path, name), 0o644);
  }
  chmodSync(path, 0o755);
  return {
    path,
    gsup: join(path, 'bin/gsup.cjs'),
    fixture: (name) => join(path, 'fixtures', name),
    bin: (name) => join(path, 'node_modules/.bin', name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** The machine's temp directory where every folder on its way can be entered by all, else /var/tmp or /tmp. */
function reachableTempDir(): string {
  const candidates = [machineTempDir(), '/var/tmp', '/tmp'];
  const found = candidates.find((candidate) => existsSync(candidate) && enterableByAll(candidate));
  if (!found) throw new Error(`no temp directory every user can enter among ${candidates.join(', ')}`);
  return found;
}

function enterableByAll(path: string): boolean {
  for (let current = resolve(path); ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (dirname(current) === current) return true;
  }
}

/** A file or folder of the checkout (relative to it) to the same place in the copy. */
function copy(part: string, into: string): void {
  mkdirSync(dirname(join(into, part)), { recursive: true });
  place(join(ROOT, part), join(into, part));
}

/**
 * A hard link to a file that is already the way the copy needs it (root's or ours, readable by all, executable by
 * all if by its owner, writable by none but its owner): nothing to copy. Anything else is copied, and made so.
 * Folders are made anew (0755); symbolic links kept as they are (relative, within a package).
 */
function place(source: string, target: string): void {
  const stat = lstatSync(source);
  if (stat.isSymbolicLink()) return symlinkSync(readlinkSync(source), target);
  if (stat.isDirectory()) {
    mkdirSync(target);
    chmodSync(target, 0o755);
    for (const entry of readdirSync(source)) place(join(source, entry), join(target, entry));
    return;
  }
  const executable = (stat.mode & 0o100) !== 0;
  const wanted = executable ? 0o755 : 0o644;
  if (stat.uid === process.geteuid?.() && (stat.mode & 0o777 & ~0o022) === wanted && (stat.mode & 0o022) === 0) {
    try {
      return linkSync(source, target);
    } catch {
      // another file system: copied
    }
  }
  copyFileSync(source, target);
  chmodSync(target, wanted);
}

/** Where Node would find package `name` from `from` (a folder of the checkout), if anywhere. */
function resolvePackage(name: string, from: string): string | undefined {
  const root = resolve(ROOT);
  for (let current = resolve(from); current.startsWith(root); current = dirname(current)) {
    const candidate = join(current, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
  }
  return undefined;
}

/** These packages and every one they need (dependencies, optional ones where installed, peers where present). */
function copyPackages(names: string[], into: string): void {
  const found = new Set<string>();
  const visit = (name: string, from: string) => {
    const dir = resolvePackage(name, from);
    if (!dir || found.has(dir)) return;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const needs = { ...manifest.peerDependencies, ...manifest.optionalDependencies, ...manifest.dependencies };
    for (const dependency of Object.keys(needs)) visit(dependency, dir);
  };
  for (const name of names) visit(name, ROOT);
  // A package nested in another's node_modules comes with it.
  const dirs = [...found].filter((dir) => ![...found].some((other) => dir.startsWith(other + sep)));
  for (const dir of dirs) copy(relative(ROOT, dir), into);
  // The commands of what was copied, linked as npm links them.
  const bins = join(ROOT, 'node_modules/.bin');
  if (!existsSync(bins)) return;
  for (const name of readdirSync(bins)) {
    const link = readlinkSync(join(bins, name));
    const target = resolve(bins, link);
    if (!dirs.some((dir) => target.startsWith(dir + sep))) continue;
    mkdirSync(join(into, 'node_modules/.bin'), { recursive: true });
    symlinkSync(link, join(into, 'node_modules/.bin', name));
  }
}
