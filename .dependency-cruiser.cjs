// The layering of gsup's source, checked by `npm test` (npm run lint:layers).
// Layers, top down: cli/ → options/ → engine/ → output/ → platform/.
// Within engine/, the rooms: machine/ (the pure step) touches nothing of the world; shell/ (the loop)
// wires the others; tree/, delivery/, children/, pm2/ and health/ never reach up into the shell.
// Within machine/, its rooms go one way under the door (step.ts): stop/ → runs/ → outcomes/ → held/, ledger/.
// Within platform/linux/, proc/ is under sockets/ and process/, which stand apart.

/** The pure step's room, with its own rooms: no node:, no platform code, no timers, no logger; only types. */
const PURE = '^src/engine/machine/';

/** machine/'s rooms, top down: each imports none before it (the door's files are every room's). */
const MACHINE_ROOMS = ['stop', 'runs', 'outcomes', 'held', 'ledger'];

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
        'machine/ defines the values it speaks of (machine/values.ts): it imports no other room of src/, not even a type.',
      from: { path: PURE },
      to: { path: '^src/', pathNot: [PURE, '^src/platform/types\\.ts$'] },
    },
    {
      name: 'one-door',
      severity: 'error',
      comment: 'step.ts is the door of machine/: its rooms act for it and never call it back.',
      from: { path: '^src/engine/machine/[^/]+/' },
      to: { path: '^src/engine/machine/step\\.ts$' },
    },
    ...MACHINE_ROOMS.slice(1).map((room, index) => ({
      name: `machine-${room}-not-up`,
      severity: 'error',
      comment: `An input's way goes one direction: machine/${room}/ imports no room above it.`,
      from: { path: `^src/engine/machine/${room}/` },
      to: { path: `^src/engine/machine/(${MACHINE_ROOMS.slice(0, index + 1).join('|')})/` },
    })),
    {
      name: 'output-under-the-engine',
      severity: 'error',
      comment: 'output/ (log lines and their writer) serves the engine, options/ and cli/: it imports none of them.',
      from: { path: '^src/output/' },
      to: { path: '^src/(cli|options|engine)/' },
    },
    {
      name: 'linux-concerns-apart',
      severity: 'error',
      comment: 'platform/linux/: proc/ reads /proc for sockets/ and process/, which never import each other.',
      from: { path: '^src/platform/linux/(proc|sockets|process)/' },
      to: {
        path: '^src/platform/linux/(proc|sockets|process)/',
        pathNot: ['^src/platform/linux/$1/', '^src/platform/linux/proc/'],
      },
    },
    {
      name: 'linux-platform-on-top',
      severity: 'error',
      comment: 'platform/linux/platform.ts puts the concerns together: none of them imports it.',
      from: { path: '^src/platform/linux/[^/]+/' },
      to: { path: '^src/platform/linux/platform\\.ts$' },
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
