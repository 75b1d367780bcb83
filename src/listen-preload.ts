// The preload that the Node processes of a run load under `gsup --listen` (NODE_OPTIONS="… --require <the
// package's dist/listen-preload.cjs, or root's file of it>"; engine/listen/preload-file.ts says which). A bundle
// of its own, CommonJS, with no dependency: it runs inside the app. It never throws; when it cannot do its job it
// says one line on stderr and lets the app run. What it is handed, and what it says back: engine/listen/wire.ts.
//
// - It trusts fds 3… only once fstat matches every GSUP_LISTEN_ID entry (device and inode); otherwise it drops
//   the contract's variables from its environment (the app must not take an epoll fd for a socket).
// - Taking over (listen-preload/take-over.ts): a listen() on a held port becomes a listen on the held fd.
// - Handing on (listen-preload/hand-on.ts): its children get the sockets, until it takes one itself.
import { isPm2Process } from './listen-preload/children.js';
import { mismatch, readHeld, VARIABLES } from './listen-preload/held.js';
import { handOn, handOnSync } from './listen-preload/hand-on.js';
import { wrapOnLoad, type Method } from './listen-preload/on-load.js';
import { fstat, say, type Holder } from './listen-preload/process.js';
import { takeOver, takeOverShared, type Listen2 } from './listen-preload/take-over.js';

// Loaded twice (two --require of it, or a copy at another path): the first one acts.
const LOADED = Symbol.for('gsup.listen-preload');

function start(): void {
  const env = process.env;
  const held = readHeld(env);
  if (held === undefined) return;
  const forget = () => {
    for (const key of VARIABLES) delete env[key];
  };
  if (typeof held === 'string') {
    forget();
    return say(`the held sockets are not used: ${held}`);
  }
  // pm2's cluster reload is its own: pm2 and what it starts get nothing.
  if (isPm2Process(process.argv)) return forget();
  const wrong = mismatch(held, fstat);
  if (wrong) {
    forget();
    return say(`the held sockets are not used: ${wrong}`);
  }
  // Behind npx or tsx, a process that reads LISTEN_FDS itself checks LISTEN_PID against its own pid.
  env.LISTEN_PID = String(process.pid);
  const handed: Record<string, string> = {};
  for (const key of VARIABLES) if (env[key] !== undefined) handed[key] = env[key]!;
  const holder: Holder = { held, handed, taken: new Map(), path: __filename, said: new Set() };
  // Around Node's own methods as the app loads their modules (listen-preload/on-load.ts): a process that never
  // listens nor spawns loads neither net nor child_process.
  const listen = { listed: 'net', module: 'net', owner: 'Server', name: '_listen2' };
  const left = wrapOnLoad(listen, (listen2) => {
    // The module's exports are whole once it has loaded; a shared handle is only ever made later (a worker asks).
    process.nextTick(() => {
      try {
        takeOverShared(holder, require('node:net') as typeof import('node:net'));
      } catch (error) {
        say(`a cluster primary's shared handles are left to Node (${String(error)})`);
      }
    });
    return takeOver(holder, listen2 as Listen2);
  });
  if (left) say(`listen() is left to Node: ${left}`);
  const spawn = { listed: 'internal/child_process', module: 'child_process', owner: 'ChildProcess', name: 'spawn' };
  const unspawned = wrapOnLoad(spawn, (method) => handOn(holder, method as never) as Method);
  if (unspawned) say(`children of spawn get no held socket: ${unspawned}`);
  handOnSync(holder);
}

try {
  const global = globalThis as { [LOADED]?: boolean };
  if (!global[LOADED]) {
    global[LOADED] = true;
    start();
  }
} catch (error) {
  say(`left the app to itself: ${error instanceof Error ? error.message : String(error)}`);
}
