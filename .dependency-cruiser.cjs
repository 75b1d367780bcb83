// The layering of gsup's source, checked by `npm test` (npm run lint:layers).
// Layers, top down: cli.ts and inbox.ts → options/ → engine/ → platform/.
// Within engine/, the machine (the pure step) touches nothing of the world.

/** The files of the pure step and what it decides with: no node:, no platform code, no timers, no logger. */
const PURE = '^src/engine/(machine|state|stop-sequence|outcomes|restart|on-exit|exit-status|format|ready-word)\\.ts$';

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
      comment: 'The engine knows nothing of the command line: options/ and cli.ts are above it.',
      from: { path: '^src/engine/' },
      to: { path: '^src/(options/|cli\\.ts|inbox\\.ts)' },
    },
    {
      name: 'platform-at-the-bottom',
      severity: 'error',
      comment: 'platform/ (what differs between Linux, other POSIX systems and Windows) imports nothing above it.',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
    },
    {
      name: 'options-not-engine-internals',
      severity: 'error',
      comment: 'options/ builds a configuration: it uses the engine’s types and tables, never its moving parts.',
      from: { path: '^src/options/' },
      to: { path: '^src/engine/(supervisor|machine|wiring|event-loop|stop-rounds|children|forwarder|scans|tree|pm2|health|intake|reaper|deliver|relayers)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pure-step',
      severity: 'error',
      comment: 'The pure step imports nothing that touches the world: only its own kind, and types.',
      from: { path: PURE },
      to: { pathNot: PURE, dependencyTypesNot: ['type-only'] },
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
