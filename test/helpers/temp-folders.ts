import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, expect } from 'vitest';

// The temp-folder half of the leak check, registered before every test file
// of every project (vitest.config.ts, setupFiles, listed before leaks.ts so
// that it runs after it: after-hooks run in reverse order, and a folder can
// only be judged once the processes that might still write in it are gone).
//
// Each test file gets a temp directory of its own (TMPDIR, which os.tmpdir()
// reads on every call and every process the test starts inherits: gsup, its
// fixtures, pm2), so what a file leaves can be told apart from what other
// files, or other test runs on the machine, are doing at the same time. After
// each test, an entry that was not there before it is a leak: the test fails,
// naming it, and the entry is removed. After the file, the directory must be
// empty but for tool caches; it is then removed, so a run of the suite leaves
// the machine's temp directory as it found it.

// Caches tools keep in the temp directory across runs (tsx: tsx-UID), not a test's leftovers.
const CACHES = /^tsx-\d+$/;

// Kept across the files a worker runs: its folders, and the machine's temp directory as it found it.
const shared = globalThis as { gsupSuite?: { machineTmp: string; folders: Set<string> } };
if (!shared.gsupSuite) {
  const folders = new Set<string>();
  shared.gsupSuite = { machineTmp: tmpdir(), folders };
  // A file that fails before its hooks run (an error at import) still has its folder removed, at the worker's exit.
  process.once('exit', () => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));
}
const { machineTmp, folders } = shared.gsupSuite;
const own = mkdtempSync(join(machineTmp, 'gsup-suite-'));
// As /tmp: a test may drop to another user (setpriv) and that user's processes use it too.
chmodSync(own, 0o1777);
process.env.TMPDIR = own;
folders.add(own);

const entries = () => readdirSync(own).filter((name) => !CACHES.test(name));
let before = new Set<string>();
let inTest = false;
const ofTest: string[] = [];
const ofFile: string[] = [];

/**
 * A fresh folder for a test (tempDir() in helpers/gsup.ts), removed after the
 * test that made it (or, made outside a test, after the file), whether it
 * passed or failed, and at the worker's exit if the run was cut short. In the
 * machine's temp directory (or `under`), not the file's own: a pm2 God daemon
 * shows its PM2_HOME in a title no longer than its first command line, and
 * gsup knows it by that title (src/engine/pm2/claims.ts): a home one folder
 * deeper is cut.
 */
export function testFolder(prefix: string, under = machineTmp): string {
  const path = mkdtempSync(join(under, prefix));
  (inTest ? ofTest : ofFile).push(path);
  folders.add(path);
  return path;
}

/** The machine's temp directory, as the suite found it (not a test file's own TMPDIR). */
export const machineTempDir = (): string => machineTmp;

const remove = (paths: string[]) => {
  for (const path of paths.splice(0)) {
    rmSync(path, { recursive: true, force: true });
    folders.delete(path);
  }
};

beforeEach(() => {
  inTest = true;
  before = new Set(entries());
});

afterEach(() => {
  inTest = false;
  remove(ofTest);
  const left = entries().filter((name) => !before.has(name));
  remove(left.map((name) => join(own, name)));
  expect(left, `left in the temp directory (${own})`).toEqual([]);
});

afterAll(() => {
  remove(ofFile);
  const left = entries();
  rmSync(own, { recursive: true, force: true });
  folders.delete(own);
  process.env.TMPDIR = machineTmp;
  expect(left, 'left in the temp directory by the file (outside its tests)').toEqual([]);
});
