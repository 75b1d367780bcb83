// The layering of gsup's source, checked by `npm test` (npm run lint:layers).
// Layers, top down: cli/ → options/ → engine/ → output/ → platform/.
// Within engine/, the rooms: machine/ (the pure step) touches nothing of the world; shell/ (the loop)
// wires the others; tree/, delivery/, children/, pm2/ and health/ never reach up into the shell.

/** The pure step's room: no node:, no platform code, no timers, no logger; only types from elsewhere. */
const PURE = '^src/engine/machine/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No cycle between files: each one can be read after what it imports.',
      from: { path: '^src' },
      to: { circular: true },
    },
    {
      name: 'engine-not-up',
      severity: 'error',
      comment: 'The engine knows nothing of the command line: options/ and cli/ are above it.',
      from: { path: '^src/engine/' },
      to: { path: '^src/(options/|cli/)' },
    },
    {
      name: 'platform-at-the-bottom',
      severity: 'error',
      comment: 'platform/ (what differs between Linux, other POSIX systems and Windows) imports nothing above it.',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
    },
    {
      name: 'one-system-apart',
      severity: 'error',
      comment: 'platform/linux, posix and windows each stand on what they share (platform/*.ts), never on another.',
      from: { path: '^src/platform/(linux|posix|windows)/' },
      to: { path: '^src/platform/(linux|posix|windows)/', pathNot: '^src/platform/$1/' },
    },
    {
      name: 'options-not-engine-internals',
      severity: 'error',
      comment: 'options/ builds a configuration: it uses the engine’s types and tables, never its moving parts.',
      from: { path: '^src/options/' },
      to: {
        path: '^src/engine/(shell|delivery|children|pm2|health|tree)/',
        pathNot: '^src/engine/tree/targets\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'shell-on-top',
      severity: 'error',
      comment: 'The shell wires the rooms: none of them reaches up into it, except for its types.',
      from: { path: '^src/engine/', pathNot: '^src/engine/shell/' },
      to: { path: '^src/engine/shell/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pure-step',
      severity: 'error',
      comment: 'The pure step imports nothing that touches the world: only its own room, and types.',
      from: { path: PURE },
      to: { pathNot: PURE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'machine-on-the-ground',
      severity: 'error',
      comment:
        'machine/ defines the values it speaks of (machine/values.ts): it imports no other room, not even a type.',
      from: { path: PURE },
      to: { path: '^src/', pathNot: [PURE, '^src/platform/types\\.ts$'] },
    },
    {
      name: 'pure-step-no-node',
      severity: 'error',
      comment: 'No node: module in the pure step, not even for a type.',
      from: { path: PURE },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist)' },
  },
};
