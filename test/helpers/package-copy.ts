import { chmodSync, cpSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './gsup.js';

/**
 * gsup's package (bin/, dist/, node_modules linked) copied into `dir` (made 0755, readable by every user): under
 * the temp directory (sticky, open to all, as /tmp) its own listen preload is not on a safe path, so gsup as root
 * writes root's file under /run/gsup. Returns the copy's bin/gsup.cjs.
 */
export function copyPackage(dir: string): string {
  chmodSync(dir, 0o755);
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return join(dir, 'bin', 'gsup.cjs');
}

/**
 * The command and arguments that run gsup from `bin` in a mount namespace of its own with a private /run (a
 * tmpfs, 0755, root's): what it writes under /run/gsup is the test's alone (another test file may use the
 * machine's at the same time) and goes with the namespace. gsup's pid is the Run's (unshare and sh exec it).
 */
export function withPrivateRun(bin: string, args: string[]): [string, string[]] {
  const script = 'mount -t tmpfs -o mode=755 tmpfs /run && exec "$0" "$@"';
  return ['unshare', ['--mount', 'sh', '-c', script, process.execPath, bin, ...args]];
}
