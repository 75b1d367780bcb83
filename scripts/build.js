// Bundles the CLI and the library to one file each, and writes the library's
// type declarations. The CLI is CommonJS: Node 20 loads it ~10 ms faster than
// an ES module, and start-up is most of what `gsup -- true` costs.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
// The signal inbox too: bin/gsup.cjs loads it first (after the loader, code-cache.cjs), so that no signal
// finds gsup without a handler while the rest loads; the CLI shares that instance.
// flags.cjs comes through the loader, with its code cache (src/cli/code-cache.ts).
const filesApart = {
  name: 'files-apart',
  setup(build) {
    build.onResolve({ filter: /\/flags\.js$/ }, () => ({ path: 'flags', namespace: 'cached' }));
    build.onLoad({ filter: /^flags$/, namespace: 'cached' }, () => ({
      contents:
        "module.exports = require('./code-cache.cjs').loadBundle(require('node:path').join(__dirname, 'flags.cjs')).exports;",
      loader: 'js',
    }));
    build.onResolve({ filter: /^\.\/code-cache\.cjs$/ }, () => ({ path: './code-cache.cjs', external: true }));
    build.onResolve({ filter: /^\.\/inbox\.js$/ }, () => ({ path: './inbox.cjs', external: true }));
  },
};
// import.meta.url in a CommonJS bundle: where koffi is looked for (beside this file).
// import() as require(): in a CommonJS file import() starts the ES module loader, which costs, and in a
// bundle compiled by node:vm (src/cli/code-cache.ts) it has no loader to call at all.
const moduleUrl = {
  supported: { 'dynamic-import': false },
  // Read, copied and compiled at every start: a third smaller without its whitespace (names are kept as written,
  // so a stack trace still reads).
  minifyWhitespace: true,
  minifySyntax: true,
  define: { ...common.define, 'import.meta.url': '__gsupModuleUrl' },
  // A plain path as it is (src/platform/builtins.ts: moduleFile reads it back the same way): node:url's URL costs
  // ~0.5 ms of a start at its first use.
  banner: {
    js:
      'const __gsupModuleUrl = /^\\/[\\w./@+-]*$/.test(__filename) ? `file://${__filename}` : ' +
      "require('node:url').pathToFileURL(__filename).href;",
  },
};
// node:module's createRequire in the CommonJS bundles is the CJS loader's own (require.main's constructor has it):
// node:module itself loads Node's ES module loader and source maps with it (~0.5 ms of a start). Without a main
// module (a bundle required from an ES module), node:module's as usual.
const loaderModule = {
  name: 'loader-module',
  setup(build) {
    build.onResolve({ filter: /^node:module$/ }, ({ namespace }) =>
      namespace === 'loader-module'
        ? { path: 'node:module', external: true }
        : { path: 'module', namespace: 'loader-module' },
    );
    build.onLoad({ filter: /^module$/, namespace: 'loader-module' }, () => ({
      // An ES module of what gsup uses (createRequire): a CommonJS one would be copied whole into each importer.
      contents:
        'const main = require.main && require.main.constructor;\n' +
        "const Module = main && typeof main.createRequire === 'function' ? main : require('node:module');\n" +
        'export const createRequire = Module.createRequire;',
      loader: 'js',
    }));
  },
};
await build({
  ...common,
  plugins: [loaderModule],
  entryPoints: { 'code-cache': 'src/cli/code-cache.ts' },
  outExtension: { '.js': '.cjs' },
  outdir: 'dist',
  format: 'cjs',
});
await build({
  ...common,
  plugins: [loaderModule],
  entryPoints: { flags: 'src/options/flags.ts', inbox: 'src/cli/inbox.ts' },
  outExtension: { '.js': '.cjs' },
  outdir: 'dist',
  format: 'cjs',
  ...moduleUrl,
});
await build({
  ...common,
  plugins: [filesApart, loaderModule],
  // exec-tty: gsup's own `setsid -c`, run by node where the image has no setsid(1).
  entryPoints: { cli: 'src/cli/cli.ts', 'exec-tty': 'src/platform/linux/process/exec-tty.ts' },
  outExtension: { '.js': '.cjs' },
  outdir: 'dist',
  format: 'cjs',
  ...moduleUrl,
});
// The preload the Node processes of a run load under --listen (src/listen-preload.ts): its own small file, with
// no dependency and nothing of gsup's; CommonJS, as `--require` takes it.
await build({
  ...common,
  entryPoints: { 'listen-preload': 'src/listen-preload.ts' },
  outExtension: { '.js': '.cjs' },
  outdir: 'dist',
  format: 'cjs',
  external: [],
  // Every Node process of a run parses it: small, names kept (a stack trace still reads).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  // platform/builtins.ts gives it binding(); its import.meta (for gsup's own lazy require) is shaken out.
  logOverride: { 'empty-import-meta': 'silent' },
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
// ASCII only: esbuild escapes the rest in strings and names, not in the comments it keeps; escaped
// there too, a bundle reads as latin1, twice as fast as UTF-8 (src/cli/code-cache.ts).
// The bundles that only loadBundle() loads are written in require()'s wrapper (src/cli/code-cache.ts: wrapped).
const { wrapped } = createRequire(import.meta.url)('../dist/code-cache.cjs');
for (const name of ['code-cache', 'inbox', 'cli', 'flags']) {
  const file = new URL(`dist/${name}.cjs`, root);
  const text = readFileSync(file, 'utf8');
  const escape = (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  const ascii = text.replace(/[^\x00-\x7f]/g, escape);
  writeFileSync(file, name === 'code-cache' ? ascii : wrapped(ascii));
}
// V8's code cache of the CLI's bundles, made by one start of each kind (scripts/code-cache.cjs). Without
// it gsup works the same, only slower to start: a failure here is a warning.
for (const which of ['cli', 'listen', 'flags']) {
  try {
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // as gsup runs: without them (apart.ts), so V8's flags are the same
    execFileSync(process.execPath, [new URL('scripts/code-cache.cjs', root).pathname, which], {
      cwd: root,
      env,
      stdio: 'inherit',
    });
  } catch (error) {
    console.warn(`build: no code cache of a ${which} start (${error.message.split('\n')[0]}): gsup starts slower`);
  }
}
execFileSync(
  process.execPath,
  [new URL('node_modules/typescript/bin/tsc', root).pathname, '-p', 'tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
