import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * koffi's prebuilt binary, loaded straight away: koffi's own loader (which
 * finds the same binary, then wraps a few deprecated functions) costs about
 * 10 ms of gsup's start-up. Only from where npm puts it for gsup: gsup's own
 * node_modules, or the node_modules gsup itself is installed in; never a
 * path beside a clone (/tmp/@koromix/…: anyone may write there). Anything
 * else (musl, a nested install) goes through Node's module resolution.
 */
export function loadKoffi(moduleUrl: string): typeof import('koffi') {
  const require = createRequire(moduleUrl);
  const binary = `@koromix/koffi-${process.platform}-${process.arch}/${process.platform}_${process.arch}/koffi.node`;
  // The caller is dist/*.cjs (or dist/index.js) of the package: its folder's parent is gsup's.
  const packageDir = dirname(dirname(fileURLToPath(moduleUrl)));
  const places = [join(packageDir, 'node_modules', binary)];
  const parent = dirname(packageDir);
  // Installed as a dependency: node_modules/gsup or node_modules/@scope/gsup.
  const installedIn = basename(parent) === 'node_modules' ? parent : basename(dirname(parent)) === 'node_modules' && basename(parent).startsWith('@') ? dirname(parent) : undefined;
  if (installedIn) places.push(join(installedIn, binary));
  for (const path of places) {
    try {
      const native = require(path);
      if (typeof native.load === 'function' && typeof native.errno === 'function') return native;
    } catch {
      // not there, or not loadable here (musl)
    }
  }
  return require('koffi') as typeof import('koffi');
}
