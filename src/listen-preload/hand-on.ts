// Handing on: Node marks inherited fds close-on-exec at start, so each Node process of a run passes the held
// sockets (and the report channel) to the children it spawns, until it takes one itself.
import { requires, withPreload } from '../engine/listen/node-options.js';
import { LISTEN_FDS } from '../engine/listen/wire.js';
import { binding } from '../platform/builtins.js';
import { childEnvPairs, handOnStdio, handOnSyncStdio, pairValue, runsPm2 } from './children.js';
import { mismatch, VARIABLES } from './held.js';
import { fstat, sayOnce, type Holder } from './process.js';

/** What spawn() hands the process binding (normalizeSpawnArguments' result), as far as it is read here. */
interface SpawnOptions {
  file?: unknown;
  args?: unknown;
  envPairs?: unknown;
  stdio?: unknown;
  uid?: unknown;
  gid?: unknown;
}

/** Whether this child gets the sockets: the rules of "Handing on", but for its stdio (see handOnStdio). */
function gets(holder: Holder, options: SpawnOptions, pairs: readonly string[]): boolean {
  if (holder.taken.size > 0) return false;
  // Another user: an app that drops its privileges for a child must not hand it a root process's socket.
  if (options.uid != null && options.uid !== process.geteuid?.()) return false;
  if (options.gid != null && options.gid !== process.getegid?.()) return false;
  // A cluster worker: listen() is the primary's (round-robin), and the primary's alone.
  if (pairValue(pairs, 'NODE_UNIQUE_ID') !== undefined) return false;
  const args = Array.isArray(options.args) ? options.args.slice(1) : [];
  if (runsPm2([String(options.file), ...args.map(String)])) return false;
  const wrong = mismatch(holder.held, fstat);
  if (wrong) sayOnce(holder, 'hand-on', `children get no held socket: ${wrong}`);
  return wrong === undefined;
}

function rewrite(holder: Holder, options: SpawnOptions, stdioFor: typeof handOnStdio): void {
  try {
    if (!options || !Array.isArray(options.envPairs)) return;
    const pairs = options.envPairs as string[];
    const fds = holder.held.sockets.map((socket) => socket.fd);
    if (holder.held.reportFd !== undefined) fds.push(holder.held.reportFd);
    const stdio = gets(holder, options, pairs) ? stdioFor(options.stdio, fds) : undefined;
    const nodeOptions = pairValue(pairs, 'NODE_OPTIONS');
    // The preload goes with the sockets: a child spawned with an environment of its own gets it back.
    const given = stdio && {
      ...holder.handed,
      ...(requires(nodeOptions, holder.path) ? {} : { NODE_OPTIONS: withPreload(nodeOptions, holder.path) }),
    };
    const next = childEnvPairs(pairs, VARIABLES, holder.handed, given);
    if (stdio) options.stdio = stdio;
    options.envPairs = next;
  } catch (error) {
    sayOnce(holder, 'rewrite', `a child was spawned as the app asked, without the held sockets (${String(error)})`);
  }
}

/**
 * Every asynchronous spawn (spawn, fork, exec, execFile, and what libraries build on them) goes through
 * ChildProcess.prototype.spawn with the app's stdio and the child's environment as pairs.
 */
export function handOn(holder: Holder, spawn: (options: SpawnOptions) => unknown): (options: SpawnOptions) => unknown {
  return function (this: unknown, options: SpawnOptions) {
    rewrite(holder, options, handOnStdio);
    return spawn.call(this, options);
  };
}

/**
 * The synchronous ones (spawnSync, execSync, execFileSync) go through the spawn_sync binding's spawn, with Node's
 * own stdio entries.
 */
export function handOnSync(holder: Holder): void {
  const sync = binding('spawn_sync');
  const spawnSync = sync?.spawn as ((options: SpawnOptions) => unknown) | undefined;
  if (!sync || typeof spawnSync !== 'function') {
    sayOnce(
      holder,
      'sync',
      `children of spawnSync get no held socket, and may see ${LISTEN_FDS} (no spawn_sync binding)`,
    );
    return;
  }
  sync.spawn = function (this: unknown, options: SpawnOptions) {
    rewrite(holder, options, handOnSyncStdio);
    return spawnSync.call(this, options);
  };
}
