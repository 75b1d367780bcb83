// Bundles the CLI and the library to one file each, and writes the library's
// type declarations. The CLI is CommonJS: Node 20 loads it ~10 ms faster than
// an ES module, and start-up is most of what `gsup -- true` costs.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
rmSync(new URL('dist', root), { recursive: true, force: true });

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  define: { GSUP_VERSION: JSON.stringify(version) },
  // Loaded at run time, and only where used (execa: Windows; koffi: Linux).
  external: ['execa', 'koffi'],
  absWorkingDir: root.pathname,
  logLevel: 'warning',
};
// commander (two thirds of the CLI's code) lives in a file of its own, read
// only when the command line has options of gsup's own.
// The signal inbox too: bin/gsup.cjs loads it first, so that no signal finds
// gsup without a handler while the rest loads; the CLI shares that instance.
const filesApart = {
  name: 'files-apart',
  setup(build) {
    build.onResolve({ filter: /\/flags\.js$/ }, () => ({ path: './flags.cjs', external: true }));
    build.onResolve({ filter: /^\.\/inbox\.js$/ }, () => ({ path: './inbox.cjs', external: true }));
  },
};
// import.meta.url in a CommonJS bundle: where koffi is looked for (beside this file).
const moduleUrl = {
  define: { ...common.define, 'import.meta.url': '__gsupModuleUrl' },
  banner: { js: "const __gsupModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
};
await build({
  ...common,
  entryPoints: { flags: 'src/options/flags.ts', inbox: 'src/inbox.ts' },
  outExtension: { '.js': '.cjs' },
  outdir: 'dist',
  format: 'cjs',
  ...moduleUrl,
});
await build({
  ...common,
  plugins: [filesApart],
  // exec-tty: gsup's own `setsid -c`, run by node where the image has no setsid(1).
  entryPoints: { cli: 'src/cli.ts', 'exec-tty': 'src/platform/exec-tty.ts' },
  outExtension: { '.js': '.cjs' },
  outdir: 'dist',
  format: 'cjs',
  ...moduleUrl,
});
await build({
  ...common,
  entryPoints: { index: 'src/index.ts' },
  outdir: 'dist',
  format: 'esm',
  // CommonJS dependencies bundled into an ES module need a require().
  banner: {
    js: "import { createRequire as __gsupCreateRequire } from 'node:module'; const require = __gsupCreateRequire(import.meta.url);",
  },
});
execFileSync(
  process.execPath,
  [new URL('node_modules/typescript/bin/tsc', root).pathname, '-p', 'tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
