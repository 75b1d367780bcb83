import type { Logger } from '../../output/log.js';
import type { Platform } from '../../platform/index.js';
import type { SuperviseOptions } from '../config/api.js';
import { Children } from '../children/children.js';
import { AfterStart } from './start-steps.js';
import { Deaths } from '../children/deaths.js';
import type { SupervisorConfig } from '../config/config.js';
import { Forwarder } from '../delivery/forwarder.js';
import { HealthChecks } from '../health/checks.js';
import { IdleTrim } from './idle-trim.js';
import { Pm2Supervision } from '../pm2/daemons.js';
import { Provenance } from '../tree/provenance.js';
import type { EngineEvent } from './queue.js';
import { ReadyListeners } from '../health/ready-listeners.js';
import { Relayers } from '../delivery/relayers.js';
import { spawnRun as spawnCommand } from '../children/run.js';
import { defaultSpawn } from '../children/spawn.js';
import { mainThread } from '../../platform/builtins.js';
import { Looks } from '../tree/looks.js';
import { StopRounds } from '../delivery/stop-rounds.js';
import { ProcessTree } from '../tree/tree.js';
import type { CommandExit } from '../machine/values.js';
import type { HeldInput } from '../machine/state.js';
import { Handover } from '../listen/handover.js';
import { TakerSamples } from '../listen/takers.js';
import type { Ending } from '../tree/looks.js';

// A trim this long after the first event of a burst (see IdleTrim).
const TRIM_AFTER_MS = 1000;

/** The parts of one supervision that act on the world, wired to its queue: what the shell carries effects out with. */
export function wire(
  command: string,
  config: SupervisorConfig,
  options: SuperviseOptions,
  platform: Platform,
  logger: Logger,
  abort: Ending,
  push: (event: EngineEvent) => void,
) {
  const cwd = options.cwd ?? '/';
  const env = options.env ?? process.env;
  const fault = (error: unknown) => push({ kind: 'fault', error });
  const afterStart = new AfterStart();
  const deaths = new Deaths(platform, logger, options.status, afterStart.later);
  // An orphan gsup reaped is gone: its name as the last look saw it.
  const nameOf = (pid: number) => looks.last?.alive.find((info) => info.pid === pid)?.name ?? '';
  const sigkilled = (pid: number, exit: CommandExit) =>
    exit.signal === 'SIGKILL' && deaths.sigkilled(pid, nameOf(pid), false);
  // A child reaped that was none of the tree's (a stranger, gsup's own from before its first spawn): no status.
  const children = new Children(platform, logger, sigkilled, (pid): boolean => tree.reapedApart(pid));
  const provenance = new Provenance(platform);
  // As PID 1 every orphan of the namespace comes to gsup (`docker exec`'s too); as subreaper only the tree's.
  const origin = { provenance, nodeChildren: children.nodeChildren, strict: process.pid === 1 };
  // -v names who joins the tree: their command lines are read in the looks too.
  const tree = new ProcessTree(platform, process.pid, origin, logger.enabled('info'), afterStart.later);
  // Before any spawn: what gsup's first image left (a preload's child) is never the tree's.
  // Mostly none: asked in O(1) first, before a walk of every thread's children.
  tree.noteChildrenBefore(platform.hasChildren?.() === false ? [] : (platform.ownChildren?.() ?? []));
  const lines = tree.lines;
  const looks = new Looks(tree, (snapshot) => push({ kind: 'looked', snapshot }), fault, abort);
  // A scrape of /metrics asks for a look (the shell publishes what it finds), until the supervision ends.
  if (options.status) options.status.lookAtTree = () => !abort.aborted && (looks.take(), true);
  const reaping = () => children.reaping;
  const pm2Env = provenance.env(env, 'pm2');
  const pm2 = config.pm2
    ? new Pm2Supervision(platform, tree, logger, pm2Env, reaping, command, cwd, provenance.token)
    : undefined;
  const forwarder = new Forwarder(platform, logger, config.target, pm2, looks, tree, options.suspendSelf);
  const killing = () => deaths.gsupKills();
  const stops = new StopRounds(platform, logger, children, pm2, lines, killing);
  const relayers = new Relayers(lines);
  // A probe command is Node's child (libuv reaps it), and it and its group no part of the tree.
  const probes = {
    platform,
    cwd,
    env: provenance.env(env, 'health'),
    spawned: (pid: number) => (children.nodeChildren.add(pid), tree.probes.ignore(pid)),
    reaped: (pid: number) => (children.nodeChildren.delete(pid), tree.probes.reaped(pid)),
  };
  const health =
    config.health &&
    new HealthChecks(config.health, logger, probes, (run, result) => push({ kind: 'health', run, result }), fault);
  const trimMemory = platform.trimMemory?.bind(platform);
  const trim = trimMemory && new IdleTrim(trimMemory, TRIM_AFTER_MS, abort);
  const heard = (run: number, word: 'ready' | 'stopping', via: string) => push({ kind: 'app-said', run, word, via });
  const ready = config.waitReady ? new ReadyListeners(command, platform, logger, heard) : undefined;
  const listen = options.listen && held(options.listen, platform, logger, push);
  if (listen && options.status) options.status.listenQueue = () => listen.sockets.queue();
  /**
   * Run `id` of the command: in the start directory, with this gsup's mark (and NOTIFY_SOCKET) in its
   * environment, and under --listen the held sockets at fds 3… (`next`: a reload's next run, not current yet).
   */
  const spawnRun = (id: number, args: string[], terminal: string[] | undefined, next: boolean) => {
    const marked = provenance.env(env, id);
    const { env: readyEnv, ipc } = ready?.started(id, marked) ?? { env: marked, ipc: undefined };
    const handed = listen?.handover.started(id, readyEnv);
    const runEnv = handed?.env ?? readyEnv;
    let run: ReturnType<typeof spawnCommand>;
    try {
      // gsup reaps (PID 1, subreaper: decided before the first spawn), on the thread SIGCHLD reaches (the CLI's is
      // Node's main thread; a library's may be a worker's): a command it may start without a fork.
      const here = children.reaping && (options.inbox !== undefined || mainThread());
      const reapHere = here ? children.reapHere.bind(children) : undefined;
      const spawn = options.spawn ?? defaultSpawn(platform, reapHere);
      run = spawnCommand(
        id,
        command,
        args,
        config,
        { ...options, env: runEnv, spawn },
        platform,
        terminal,
        ipc,
        handed,
      );
    } finally {
      handed?.spawned();
    }
    listen?.samples.started(id, run.pid, next);
    deaths.newRun(run.sent);
    const line = [command, ...args].join(' ');
    void run.spawned.exited.then((exit) => exit.signal === 'SIGKILL' && deaths.sigkilled(run.pid, line, true));
    return run;
  };
  return {
    tree,
    lines,
    looks,
    children,
    pm2,
    forwarder,
    stops,
    relayers,
    health,
    trim,
    ready,
    listen,
    spawnRun,
    deaths,
    afterStart,
  };
}

/** The held sockets' parts (--listen): the sockets, what each run gets of them, who of a run takes them. */
function held(
  given: NonNullable<SuperviseOptions['listen']>,
  platform: Platform,
  logger: Logger,
  push: (event: EngineEvent) => void,
) {
  const heard = (input: HeldInput) => push({ kind: 'held', input });
  const handover = new Handover(given.sockets, platform, logger, heard, given.preloadFile);
  return { sockets: given.sockets, handover, samples: new TakerSamples(platform, given.sockets, heard) };
}

export type Parts = ReturnType<typeof wire>;
