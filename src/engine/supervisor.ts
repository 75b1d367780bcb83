import type { Readable } from 'node:stream';
import { Logger, silentLogger } from '../log.js';
import { JOB_CONTROL_SIGNALS, STOP_SIGNALS, signalName } from '../options/signals.js';
import { currentPlatform, type Platform, type SignalName } from '../platform/index.js';
import { formatDuration, type EngineContext, type Forwarded } from './context.js';
import { exitStatus, spawnErrorMessage } from './exit-status.js';
import { onExitAction, type OnExitPolicy } from './on-exit.js';
import { defaultSpawn, type CommandExit, type SpawnedCommand, type SpawnFunction } from './spawn.js';
import { RestartPolicy, type RestartMode } from './restart.js';
import { StopSequence } from './stop.js';
import { Relayers } from './relayers.js';
import { describeTargets, reachedPids, restrictTargets, targetSelector, type Target, type TargetMode, type TargetSelector } from './targets.js';
import { Pm2Supervision, type Pm2Manager } from './pm2.js';
import { ProcessTree, type TreeSnapshot } from './tree.js';
import { waitForEmptyTree } from './wait-empty.js';
import { Wakeup, sleep } from './wakeup.js';

export interface SuperviseOptions {
  /** Milliseconds between the stop signal and SIGKILL of what is left (10 000). */
  killTimeout?: number;
  /** Where forwarded signals go (`group`). */
  target?: TargetMode;
  /** Received signal → signal to forward; null drops it. */
  rewrite?: ReadonlyMap<SignalName, SignalName | null>;
  /** Milliseconds to wait on SIGTERM before forwarding it (0). */
  stopDelay?: number;
  /** What to do when the command exits while descendants live (`auto`). */
  onExit?: OnExitPolicy;
  /** Exit codes that count as success (become 0). */
  successExit?: readonly number[];
  stdio?: 'inherit' | 'pipe' | 'ignore';
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: Logger;
  platform?: Platform;
  spawn?: SpawnFunction;
  /**
   * Linux: set the child-subreaper bit so that orphans of the tree (daemons
   * that double-fork) are reparented to this process, and reap them. Off by
   * default in the library (it changes the host process); on in the CLI. As
   * PID 1, orphans are always reaped.
   */
  subreaper?: boolean;
  /** Look for pm2 God daemons and pm2-runtime, and route signals and stops through pm2 (true). */
  pm2?: boolean;
  /** Restart the command when it exits: `never` (default), `on-failure`, `always`. */
  restart?: RestartMode;
  /** Quick failures in a row before giving up (10). */
  maxRestarts?: number;
  /** First delay before a restart, in ms (1000); doubles after each quick failure, up to 30 s. */
  restartDelay?: number;
  /** Job control: how gsup stops itself after forwarding SIGTSTP/SIGTTIN/SIGTTOU (the CLI sends itself SIGSTOP). */
  suspendSelf?: () => void;
}

export interface SupervisorResult {
  /** What gsup exits with: the command's code, 128+N for signal N, 126/127/125. */
  exitCode: number;
  /** The command's own exit code, or null. */
  code: number | null;
  /** The signal the command died of, or null. */
  signal: SignalName | null;
  /** Whether any process had to be SIGKILLed. */
  killed: boolean;
  /** Why the command could not be started (`node: command not found`), if it could not. */
  error?: string;
}

export interface SupervisorHandle {
  /** The command's pid; undefined when it could not be started. */
  readonly pid: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Handle a signal as if gsup had received it: rewrite, forward, or stop. */
  signal(signal: SignalName): void;
  /** Start the stop sequence (SIGTERM by default) and wait for the end. */
  stop(signal?: SignalName): Promise<SupervisorResult>;
  readonly exited: Promise<SupervisorResult>;
}

const DEFAULT_KILL_TIMEOUT = 10_000;
// While the command is gone and gsup waits for what it left (daemons), one
// look a second is enough: SIGCHLD wakes the wait for gsup's own children.
const WAIT_POLL_MS = 1000;

/** Run a command and supervise its whole process tree. */
export function supervise(command: string, args: readonly string[] = [], options: SuperviseOptions = {}): SupervisorHandle {
  return new Supervisor(command, [...args], options).handle;
}

class Supervisor {
  readonly handle: SupervisorHandle;
  private readonly logger: Logger;
  private readonly platform: Platform;
  private readonly tree: ProcessTree;
  private readonly wakeup = new Wakeup();
  private readonly abort = new AbortController();
  private readonly context: EngineContext;
  /** The command's current run (a restart makes a new one). */
  private run!: CommandRun;
  private ownPgidValue: number | undefined;
  private selectorValue?: TargetSelector;
  private stopSequence?: StopSequence;
  private readonly restartPolicy: RestartPolicy;
  /** Cut short on a stop signal: the wait before a restart, or the stop of a run's leftovers. */
  private restarting?: { cancel: AbortController; cleanup?: StopSequence };
  private killed = false;
  private finished = false;
  private resolveExited!: (result: SupervisorResult) => void;
  /** Whether zombies reparented to gsup are reaped here (PID 1 or subreaper). */
  private readonly reaping: boolean;
  /** Set while gsup stays for daemons the command left (`auto`): their status becomes gsup's. */
  private supervisingDaemons = false;
  private daemonExit?: CommandExit;
  /** Children Node spawned (the command, `pm2 kill`): libuv reaps them, gsup never does. */
  private readonly nodeChildren = new Set<number>();
  private pm2?: Pm2Supervision;
  private readonly relayers: Relayers;
  private readonly removeChildWatch: () => void;

  constructor(
    private readonly command: string,
    args: string[],
    private readonly options: SuperviseOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
    this.platform = options.platform ?? currentPlatform();
    this.tree = new ProcessTree(this.platform);
    this.relayers = new Relayers(this.platform);
    this.context = {
      platform: this.platform,
      logger: this.logger,
      wakeup: this.wakeup,
      abort: this.abort.signal,
      scan: () => this.scan(),
      forward: (signal, options) => this.forward(signal, options),
      commandPid: undefined,
      ownPgid: () => this.ownPgid(),
    };

    this.restartPolicy = new RestartPolicy(options.restart ?? 'never', options.maxRestarts ?? 10, options.restartDelay ?? 1000);
    // Before the spawn: an orphan made in the first millisecond must come to gsup too.
    this.reaping = this.adoptOrphans();
    if (options.pm2 ?? true) {
      const ownStart = async () => (await this.platform.processInfo(process.pid))?.startTime ?? 0;
      this.pm2 = new Pm2Supervision(this.platform, this.tree, this.logger, options.env ?? process.env, ownStart, command, options.cwd ?? process.cwd());
    }
    this.removeChildWatch = this.platform.watchChildren(() => {
      this.reap();
      this.wakeup.wake();
    });
    const exited = new Promise<SupervisorResult>((resolve) => {
      this.resolveExited = resolve;
    });
    this.startRun(args);

    const supervisor = this;
    this.handle = {
      get pid() {
        return supervisor.run.pid;
      },
      get stdout() {
        return supervisor.run.spawned.stdout;
      },
      get stderr() {
        return supervisor.run.spawned.stderr;
      },
      signal: (signal) => this.receive(signal),
      stop: (signal = 'SIGTERM') => {
        this.requestStop(signal, 'stop requested');
        return exited;
      },
      exited,
    };
  }

  /** Spawn the command (again, after a restart) and follow this run. */
  private startRun(args: string[]): void {
    const target = this.options.target ?? 'group';
    const spawned = (this.options.spawn ?? defaultSpawn(this.platform))(this.command, args, {
      detached: target === 'group',
      stdio: this.options.stdio ?? 'inherit',
      env: this.options.env,
      cwd: this.options.cwd,
    });
    const pid = spawned.pid;
    const run: CommandRun = {
      pid,
      spawned,
      startedAt: Date.now(),
      sent: new Set(),
      ready: Promise.resolve(),
      args,
    };
    run.ready = pid === undefined ? Promise.resolve() : this.tree.setCommand(pid).then((info) => {
      run.pgid = info?.pgid;
    });
    this.run = run;
    this.context.commandPid = pid;
    if (pid !== undefined) this.nodeChildren.add(pid);
    spawned.exited.then((exit) => this.onCommandExit(run, exit));
    this.logger.debug('spawn', `started ${this.command} (pid ${pid ?? '-'}, target ${target})`, { pid, target });
  }

  /** A signal gsup received: rewrite it, then stop, forward, or drop it. */
  private receive(received: SignalName): void {
    if (this.finished) return;
    const rewrite = this.options.rewrite;
    const signal = rewrite?.has(received) ? rewrite.get(received)! : received;
    if (signal === null) {
      this.logger.info('drop', `${received} received: dropped (rewrite)`, { received });
      return;
    }
    if (signal !== received) this.logger.debug('rewrite', `${received} rewritten to ${signal}`, { received, signal });
    if (STOP_SIGNALS.has(signal)) {
      this.requestStop(signal, `${received} received`);
      return;
    }
    const forwarded = this.forward(signal).then(
      () => undefined,
      (error: unknown) => this.logger.error('forward-failed', `${signal} not forwarded: ${error instanceof Error ? error.message : String(error)}`),
    );
    // Job control: once the signal is out, gsup stops itself too.
    if (JOB_CONTROL_SIGNALS.has(signal) && this.options.suspendSelf) void forwarded.then(this.options.suspendSelf);
  }

  private requestStop(signal: SignalName, reason: string): void {
    if (this.finished) return;
    if (this.restarting) {
      // No restart after a stop signal: end the wait and exit with the last
      // status. A stop of the last run's leftovers goes on; a second stop
      // signal makes it kill at once.
      if (this.restarting.cancel.signal.aborted) {
        this.restarting.cleanup?.escalate();
        return;
      }
      this.logger.notice('restart-cancelled', `${reason}: no restart`);
      this.restarting.cancel.abort();
      return;
    }
    if (this.stopSequence) {
      this.stopSequence.escalate();
      return;
    }
    const delay = signal === 'SIGTERM' ? (this.options.stopDelay ?? 0) : 0;
    this.runStop(signal, delay, reason);
  }

  private runStop(signal: SignalName, delayMs: number, reason: string): void {
    const sequence = new StopSequence(this.context, this.options.killTimeout ?? DEFAULT_KILL_TIMEOUT);
    this.stopSequence = sequence;
    sequence
      .run(signal, delayMs, reason)
      .then((summary) => {
        if (summary.killed.length > 0) this.killed = true;
        return this.finish();
      })
      .catch((error) => this.fail(error));
  }

  private async onCommandExit(run: CommandRun, exit: CommandExit): Promise<void> {
    run.exit = exit;
    if (run.pid !== undefined) this.nodeChildren.delete(run.pid);
    this.wakeup.wake();
    if (exit.errorCode !== undefined) return this.finish();
    const status = exitStatus(exit);
    this.logger.debug('command-exit', `command exited (${describeExit(exit)})`, { code: exit.code, signal: exit.signal });
    if (this.stopSequence) return; // the stop waits for the whole tree by itself

    try {
      const decision = this.restartPolicy.decide(exit, Date.now() - run.startedAt, run.sent);
      if (decision.restart) return await this.restart(run, decision.delayMs, `${decision.reason} (restart ${decision.attempt} of ${this.options.maxRestarts ?? 10})`);
      if (decision.reason) this.logger.warn('restart-give-up', `command ${decision.reason}`);
      const policy = this.options.onExit ?? 'auto';
      let leftovers: TreeSnapshot['alive'] = [];
      if (policy !== 'exit' && !this.nothingCanBeLeft()) {
        const snapshot = await this.scan();
        leftovers = snapshot.alive;
        // A God daemon that `pm2 start` left may be known by its pid file alone (no subreaper): adopt it now.
        const managers = this.pm2 ? await this.pm2.find(snapshot) : [];
        if (managers.some((manager) => !leftovers.includes(manager.info))) leftovers = (await this.scan()).alive;
      }
      if (this.stopSequence) return; // a stop signal came while we looked
      const action = onExitAction(policy, status, leftovers, run.pgid);
      if (action === 'exit') return this.finish();
      this.supervisingDaemons = action === 'wait' && policy === 'auto';
      if (action === 'stop') {
        return this.runStop('SIGTERM', 0, `command exited (${describeExit(exit)}) leaving ${leftovers.length} process(es)`);
      }
      this.logger.notice('waiting', `command exited (${describeExit(exit)}); waiting for ${leftovers.length} remaining process(es)`, {
        pids: leftovers.map((info) => info.pid),
      });
      const empty = await waitForEmptyTree(this.context, { deadline: Infinity, pollMs: WAIT_POLL_MS });
      if (empty && !this.stopSequence) await this.finish();
    } catch (error) {
      this.fail(error);
    }
  }

  /** Stop what the last run left (two runs never overlap), wait the backoff, run again. */
  private async restart(run: CommandRun, delayMs: number, reason: string): Promise<void> {
    const restarting: NonNullable<Supervisor['restarting']> = { cancel: new AbortController() };
    this.restarting = restarting;
    const leftovers = this.nothingCanBeLeft() ? [] : (await this.scan()).alive;
    if (leftovers.length > 0 && !restarting.cancel.signal.aborted) {
      restarting.cleanup = new StopSequence(this.context, this.options.killTimeout ?? DEFAULT_KILL_TIMEOUT);
      const summary = await restarting.cleanup.run('SIGTERM', 0, `command ${reason}, leaving ${leftovers.length} process(es)`);
      if (summary.killed.length > 0) this.killed = true;
    }
    if (!restarting.cancel.signal.aborted) {
      this.logger.notice('restart', `command ${reason}: restarting in ${formatDuration(delayMs)}`, { delayMs, reason });
      await sleep(delayMs, restarting.cancel.signal);
    }
    this.restarting = undefined;
    if (restarting.cancel.signal.aborted || this.finished) return this.finish();
    this.startRun(run.args);
  }

  /**
   * Once the command is gone: as PID 1 or subreaper, every process it left is
   * now a child of gsup (orphans come here). No such child, and nothing else
   * ever seen in the tree: nothing is left, and no /proc scan is needed.
   */
  private nothingCanBeLeft(): boolean {
    if (!this.reaping || !this.platform.ownChildren || this.tree.knownCount > 1 || this.pm2?.pidFileExists()) return false;
    return this.platform.ownChildren().every((pid) => this.nodeChildren.has(pid));
  }

  private adoptOrphans(): boolean {
    const pid1 = process.pid === 1;
    if (!this.platform.adoptOrphans || (!pid1 && !this.options.subreaper)) return false;
    const why = this.platform.adoptOrphans(!pid1);
    if (why === undefined) return true;
    this.logger.warn(
      'no-reaping',
      pid1
        ? `as PID 1 gsup cannot reap orphaned zombies: ${why}`
        : `cannot become child subreaper: ${why}; daemons that double-fork will leave the tree`,
      { reason: why },
    );
    return false;
  }

  /** Reap zombies reparented to gsup; never the command, whose status Node collects. */
  private reap(): number {
    if (!this.reaping || !this.platform.reapZombies) return 0;
    const { reaped, notYet } = this.platform.reapZombies(this.nodeChildren);
    for (const child of reaped) {
      const exit: CommandExit = { code: child.code, signal: child.signal === null ? null : (signalName(child.signal) ?? null) };
      if (this.supervisingDaemons) this.daemonExit = exit;
      this.logger.info('reaped', `reaped pid ${child.pid} (${describeExit(exit)})`, { pid: child.pid, code: exit.code, signal: exit.signal });
    }
    return notYet;
  }

  private async scan(): Promise<TreeSnapshot> {
    await this.run.ready;
    const snapshot = await this.tree.scan();
    if (this.logger.enabled('info')) {
      for (const info of snapshot.joined) {
        this.logger.info('tree-join', `pid ${info.pid} joined the tree (${this.platform.commandLine(info.pid)})`, {
          pid: info.pid,
          ppid: info.ppid,
          pgid: info.pgid,
        });
      }
      if (snapshot.left.length > 0) {
        this.logger.info('tree-leave', `pid ${snapshot.left.join(', ')} left the tree`, { pids: snapshot.left });
      }
    }
    return snapshot;
  }

  private async forward(signal: SignalName, { only, stop = false }: { only?: ReadonlySet<number>; stop?: boolean } = {}): Promise<Forwarded> {
    const selector = await this.selector();
    // The command's own group goes first, before the look at the tree: that
    // look is a /proc scan, and the app should not wait for it. Not so for
    // the signals that wrappers act on themselves — stop signals (tsx relays
    // them, so it must get them first) and SIGQUIT (pm2 stops its apps on
    // it, so a pm2 runtime inside the group must get it alone).
    const early = stop || only || signal === 'SIGQUIT' ? undefined : await this.commandGroup();
    if (early !== undefined) this.platform.kill(-early, signal);
    const snapshot = await this.scan();
    let targets = selector.select(snapshot, this.run.pid);
    this.run.sent.add(signal);
    if (early !== undefined) targets = targets.filter((target) => (target.kind === 'group' ? target.pgid : target.process.pgid) !== early);
    let pm2Kill: Pm2Manager[] = [];
    const reached = new Set<number>(early === undefined ? [] : snapshot.alive.filter((info) => info.pgid === early).map((info) => info.pid));
    if (this.pm2) {
      const route = this.pm2.route(targets, snapshot, await this.pm2.find(snapshot), signal, stop);
      targets = route.targets;
      pm2Kill = route.pm2Kill.filter((manager) => !only || only.has(manager.info.pid));
      if (pm2Kill.length > 0) for (const pid of route.managed) reached.add(pid);
    }
    if (only) targets = restrictTargets(targets, only);
    const byPid = new Map(snapshot.alive.map((info) => [info.pid, info]));
    const relayers = this.relayers.find([...reachedPids(targets)].map((pid) => byPid.get(pid)!), signal);
    if (relayers.length > 0) {
      await this.relayers.signalFirst(relayers, signal);
      const first = new Set(relayers.map((info) => info.pid));
      targets = restrictTargets(targets, new Set(snapshot.alive.map((info) => info.pid).filter((pid) => !first.has(pid))));
      targets.unshift(...relayers.map((process): Target => ({ kind: 'process', process })));
    }
    for (const target of targets) {
      if (target.kind === 'process' && relayers.includes(target.process)) continue; // signalled first, above
      this.platform.kill(target.kind === 'group' ? -target.pgid : target.process.pid, signal);
    }
    for (const manager of pm2Kill) this.spawnPm2Kill(manager);
    if (this.logger.enabled('info')) {
      const described = [...(early === undefined ? [] : [`group ${early} (${reached.size})`]), ...(targets.length > 0 ? [describeTargets(targets)] : [])];
      if (described.length > 0 || pm2Kill.length === 0) {
        this.logger.info('forward', described.length > 0 ? `${signal} → ${described.join(', ')}` : `${signal}: no process to forward to`, {
          signal,
          targets: [
            ...(early === undefined ? [] : [{ pgid: early }]),
            ...targets.map((target) => (target.kind === 'group' ? { pgid: target.pgid } : { pid: target.process.pid })),
          ],
        });
      }
    }
    for (const pid of reachedPids(targets)) reached.add(pid);
    return { snapshot, reached };
  }

  /**
   * The command's process group, when it can be signalled without a look at
   * the tree: `group` target, the command not yet reaped (so the group exists
   * and its id cannot be reused; every member is in the command's session,
   * so ours), and the command not a pm2 manager (which gets signals alone).
   */
  private async commandGroup(): Promise<number | undefined> {
    if ((this.options.target ?? 'group') !== 'group') return undefined;
    const run = this.run;
    await run.ready;
    if (run.exit || run.pid === undefined || run.pgid !== run.pid) return undefined;
    if (this.pm2 && (await this.pm2.isManager(run.pid))) return undefined;
    return run.pid;
  }

  private spawnPm2Kill(manager: Pm2Manager): void {
    const pid = this.pm2!.kill(manager, () => this.nodeChildren.delete(pid!));
    if (pid !== undefined) this.nodeChildren.add(pid);
  }

  private async selector(): Promise<TargetSelector> {
    this.selectorValue ??= targetSelector(this.options.target ?? 'group', await this.ownPgid());
    return this.selectorValue;
  }

  private async ownPgid(): Promise<number> {
    if (this.ownPgidValue === undefined) {
      this.ownPgidValue = (await this.platform.processInfo(process.pid))?.pgid ?? -1;
    }
    return this.ownPgidValue;
  }

  private async finish(): Promise<void> {
    if (this.finished) return;
    const commandExit = this.run.exit ?? (await this.run.spawned.exited);
    if (this.finished) return;
    // A zombie is not alive, so the tree can look empty before SIGCHLD has
    // been handled: reap now, so a daemon's status is not missed — waiting
    // (briefly) for zombies whose threads are still exiting.
    for (let tries = 0; this.reap() > 0 && tries < 200; tries++) await sleep(5);
    if (this.finished) return;
    // gsup stayed for the command's daemons: their status is what it reports.
    const exit = this.daemonExit ?? commandExit;
    this.finished = true;
    this.abort.abort();
    this.removeChildWatch();
    this.resolveExited({
      exitCode: exitStatus(exit, this.options.successExit),
      code: exit.code,
      signal: exit.signal,
      killed: this.killed,
      ...(exit.errorCode !== undefined && { error: spawnErrorMessage(this.command, exit.errorCode) }),
    });
  }

  private fail(error: unknown): void {
    this.logger.error('internal', `internal error: ${error instanceof Error ? error.message : String(error)}`);
    if (this.finished) return;
    this.finished = true;
    this.abort.abort();
    this.removeChildWatch();
    this.resolveExited({ exitCode: 125, code: null, signal: null, killed: this.killed });
  }
}

/** One run of the command. */
interface CommandRun {
  pid: number | undefined;
  /** Its process group, once known. */
  pgid?: number;
  spawned: SpawnedCommand;
  args: string[];
  startedAt: number;
  /** Resolves once its facts (group, start time) are read. */
  ready: Promise<void>;
  exit?: CommandExit;
  /** Signals gsup forwarded while it ran (a death by one of them is not a failure). */
  sent: Set<SignalName>;
}

function describeExit(exit: CommandExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}
