// Bundles the CLI and the library to one file each (start-up time: one file
// to load instead of hundreds), and writes the library's type declarations.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
rmSync(new URL('dist', root), { recursive: true, force: true });

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  define: { GSUP_VERSION: JSON.stringify(version) },
  // CommonJS dependencies bundled into ESM need a require().
  banner: { js: "import { createRequire as __gsupCreateRequire } from 'node:module'; const require = __gsupCreateRequire(import.meta.url);" },
  absWorkingDir: root.pathname,
  logLevel: 'warning',
};
await build({ ...common, entryPoints: { cli: 'src/cli.ts', index: 'src/index.ts' }, outdir: 'dist' });
execFileSync(process.execPath, [new URL('node_modules/typescript/bin/tsc', root).pathname, '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
