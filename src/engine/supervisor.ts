import { resolve } from 'node:path';
import { resolveConfig, type SupervisorConfig } from '../config.js';
import { Logger, silentLogger } from '../log.js';
import { currentPlatform, isAlive, type Platform, type ProcessInfo, type SignalName } from '../platform/index.js';
import { JOB_CONTROL_SIGNALS, STOP_SIGNALS, signalNumber } from '../signals.js';
import { deliver, send } from './deliver.js';
import { exitStatus, spawnErrorMessage, EXIT_INTERNAL } from './exit-status.js';
import { onExitAction } from './on-exit.js';
import { describeExit, describeTarget, formatDuration } from './format.js';
import { Forwarder } from './forwarder.js';
import { describeTargets, membersOf, units, type Target } from './plan.js';
import { Pm2Supervision, runsPm2Cli, type Pm2Manager } from './pm2.js';
import { StopRecord, type StopCause } from './stop.js';
import { EventQueue, stopFirst, type EngineEvent, type TimerName } from './queue.js';
import { spawnRun, type CommandRun } from './run.js';
import { Reaper } from './reaper.js';
import { adoptOrphans, handOverTerminal, widenSignalPipe } from './startup.js';
import { HealthChecks, type HealthConfig, type ProbeResult } from './health.js';
import { Relayers } from './relayers.js';
import { RestartPolicy, type RestartDecision } from './restart.js';
import { ScanScheduler } from './scans.js';
import type { CommandExit } from './spawn.js';
import { Timers } from './timers.js';
import { ProcessTree, type TreeSnapshot } from './tree.js';
import type { SuperviseOptions, SupervisorHandle, SupervisorResult } from './api.js';

export type { SuperviseOptions, SupervisorHandle, SupervisorResult } from './api.js';

/**
 * running → (stop-delay →) stopping → killing → ending → done, and around
 * them: exited (the command ended; looking at what it left), daemons
 * (staying for what it handed over), restarting (the wait before the next
 * run). `ending` waits for the command's status and the last zombies.
 */
export type Phase = 'running' | 'exited' | 'daemons' | 'restarting' | 'stop-delay' | 'stopping' | 'killing' | 'ending' | 'done';

/** Run a command and supervise its whole process tree. */
export function supervise(command: string, args: readonly string[] = [], options: SuperviseOptions = {}): SupervisorHandle {
  return new Supervisor(command, [...args], options).handle;
}

/** The directory the command starts in, made absolute now: restarts come after gsup has left it. */
function startDirectory(cwd: string | undefined): string | undefined {
  try {
    return resolve(cwd ?? process.cwd());
  } catch {
    return cwd; // the start directory was removed: the spawn says so
  }
}

// Sent to self at start-up to find the signal pipe: ignored by default by anything it could reach.
const PROBE_SIGNAL: SignalName = 'SIGURG';
// Looks at the tree while a stop waits for it to empty; a SIGCHLD calls one sooner.
const STOP_POLL_MS = 20;
// Looks while gsup stays for daemons the command left; SIGCHLD wakes it for its own children.
const DAEMON_POLL_MS = 1000;
// While signals flood in (this many since the last check), the command's
// state is checked this often: a full signal pipe drops SIGCHLD too, and
// its exit must never go unnoticed.
const FLOOD_SIGNALS = 64;
const CHECK_MS = 50;
// A process in uninterruptible sleep can outlive SIGKILL; give up saying so.
const MAX_KILL_MS = 5000;
// At the end, zombies whose threads are still exiting are waited for this often, this many times.
const FINAL_REAP_MS = 5;
const FINAL_REAP_TRIES = 200;

class Supervisor {
  readonly handle: SupervisorHandle;
  readonly exited: Promise<SupervisorResult>;
  private readonly config: SupervisorConfig;
  private readonly logger: Logger;
  private readonly platform: Platform;
  private readonly queue = new EventQueue(
    (event) => stopFirst(event, this.config.rewrite),
    () => void this.loop(),
  );
  private readonly timers = new Timers((name) => this.queue.push({ kind: 'timer', name }));
  private readonly tree: ProcessTree;
  private readonly scans: ScanScheduler;
  private readonly restartPolicy: RestartPolicy;
  private readonly relayers: Relayers;
  private readonly pm2?: Pm2Supervision;
  /** Children Node spawned (the command, `pm2 kill`): libuv reaps them, gsup never does. */
  private readonly nodeChildren = new Set<number>();
  /** gsup's own helper processes (`pm2 kill`): part of the tree a stop waits for, never sent the stop signal. */
  private readonly helpers = new Set<number>();
  private readonly reaper: Reaper;
  /** Where every run starts, as an absolute path: the CLI leaves it for / once the command runs. */
  private readonly cwd: string | undefined;

  private phase: Phase = 'running';
  private run!: CommandRun;
  private runs = 0;
  private stop?: StopRecord;
  private restart?: RestartDecision & { restart: true };
  private readonly forwarder: Forwarder;
  private managers: Pm2Manager[] = [];
  private ownPgid = -1;
  /** Whether zombies reparented to gsup are reaped here (PID 1 or subreaper). */
  private reaping = false;
  private signalsSinceCheck = 0;
  /** Signals gsup caused itself (the pipe probe, giving up the terminal), not yet received: never forwarded. */
  private readonly ownSignals = new Map<SignalName, number>();
  /** The argv prefix that gives each run gsup's terminal (setsid -c), when gsup handed it over. */
  private terminal?: string[];
  /** Health checks, when a probe is configured. */
  private readonly health?: HealthChecks;
  /** The last stop was for failed health checks and no restart followed: never exit 0. */
  private unhealthyExit = false;
  /** The status of the last daemon reaped while gsup stayed for them (`auto`). */
  private daemonExit?: CommandExit;
  private stayedForDaemons = false;
  private killed = false;
  private failed = 0;
  private finalReaps = 0;
  /** 128+N when a stop signal came before the command could be spawned. */
  private stoppedBeforeSpawn?: SignalName;
  private result?: SupervisorResult;
  private looping = false;
  /** Start-up is over: events pushed before it (held signals) wait until then. */
  private started = false;
  private resolveDone!: (result: SupervisorResult) => void;
  private unwatchChildren: () => void = () => {};

  constructor(
    private readonly command: string,
    args: string[],
    private readonly options: SuperviseOptions,
  ) {
    this.config = resolveConfig(options);
    this.cwd = startDirectory(options.cwd);
    this.logger = options.logger ?? silentLogger;
    this.platform = options.platform ?? currentPlatform();
    this.tree = new ProcessTree(this.platform);
    this.scans = new ScanScheduler(
      this.tree,
      (snapshot) => this.queue.push({ kind: 'tree', snapshot }),
      (error) => this.queue.push({ kind: 'fault', error }),
      this.timers.signal,
    );
    this.relayers = new Relayers(this.platform);

    this.reaper = new Reaper(this.platform, this.nodeChildren, this.logger);
    this.restartPolicy = new RestartPolicy(this.config.restart, this.config.maxRestarts, this.config.restartDelay);
    if (this.config.pm2) {
      this.pm2 = new Pm2Supervision(this.platform, this.tree, this.logger, options.env ?? process.env, () => this.reaping, command, this.cwd ?? '/');
    }
    const supervisor = this;
    this.forwarder = new Forwarder(
      this.platform,
      this.logger,
      this.config.target,
      this.pm2,
      this.scans,
      {
        get run() {
          return supervisor.run;
        },
        get managers() {
          return supervisor.managers;
        },
        get ownPgid() {
          return supervisor.ownPgid;
        },
        get reaping() {
          return supervisor.reaping;
        },
        helpers: this.helpers,
        nodeChildren: this.nodeChildren,
      },
      options.suspendSelf,
    );

    if (this.config.health) this.health = this.healthChecks(this.config.health);
    this.exited = this.main(args);
    this.handle = {
      get pid() {
        return supervisor.run?.pid;
      },
      get stdout() {
        return supervisor.run?.spawned.stdout ?? null;
      },
      get stderr() {
        return supervisor.run?.spawned.stderr ?? null;
      },
      signal: (signal) => this.receive(signal),
      stop: (signal = 'SIGTERM') => {
        this.queue.push({ kind: 'stop', signal, reason: 'stop requested' });
        return this.exited;
      },
      exited: this.exited,
    };
  }

  /** Start-up, guarded step by step; then the loop runs on each event until the phase is done. */
  private main(args: string[]): Promise<SupervisorResult> {
    // All of this runs inside supervise(): the pid is known when it returns.
    const done = new Promise<SupervisorResult>((resolve) => (this.resolveDone = resolve));
    this.options.inbox?.attach((signal) => this.receive(signal));
    this.reaping = adoptOrphans(this.platform, this.logger, this.config.subreaper); // before the spawn: an orphan of its first millisecond comes here too
    // CLI only: the probe is a signal to this very process (and is not forwarded).
    if (this.options.inbox) widenSignalPipe(this.platform, this.logger, () => this.probe());
    this.unwatchChildren = this.platform.watchChildren(() => this.queue.push({ kind: 'child' }));
    const early = this.stopSignalBeforeSpawn();
    if (early) this.finishBeforeSpawn(early);
    else {
      if (this.options.terminal && this.config.target === 'group' && (this.options.stdio ?? 'inherit') === 'inherit') {
        this.terminal = handOverTerminal(this.platform, this.logger, (signal) => this.expectOwn(signal));
      }
      this.startRun(args);
    }
    this.started = true;
    void this.loop(); // what came in before the spawn
    return done;
  }

  /**
   * The loop: take the next event, handle it, until none is left or the
   * phase is done. It runs as soon as an event is pushed while it is idle
   * (so a forwarded signal leaves in the same tick it came), never twice at
   * once: events that come while a handler waits (for a look at the tree)
   * queue up, merged, behind it.
   */
  private async loop(): Promise<void> {
    if (this.looping || !this.started) return;
    this.looping = true;
    try {
      for (let event = this.queue.take(); event && this.phase !== 'done'; event = this.queue.take()) {
        try {
          const pending = this.handleEvent(event);
          if (pending) await pending;
        } catch (error) {
          this.fault(error);
        }
      }
    } finally {
      this.looping = false;
    }
    if (this.phase === 'done') this.resolveDone(this.result!);
  }

  /**
   * A signal gsup received. When the loop is idle and nothing waits, this
   * event is the one it would take next: it is handled at once (a forwarded
   * signal leaves a few microseconds after it came, the shortest path
   * through cold code); otherwise it queues like any event.
   */
  private receive(signal: SignalName): void {
    if (this.looping || !this.started || this.queue.length > 0 || this.phase === 'done') {
      this.queue.push({ kind: 'signal', signal });
      return;
    }
    this.looping = true;
    try {
      this.onSignal(signal);
    } catch (error) {
      this.fault(error);
    } finally {
      this.looping = false;
    }
    void this.loop(); // what the signal queued, and the end if it ended the supervision
  }

  private handleEvent(event: EngineEvent): void | Promise<void> {
    switch (event.kind) {
      case 'signal':
        return this.onSignal(event.signal);
      case 'stop':
        return this.onStopSignal(event.signal, event.reason);
      case 'exit':
        return this.onCommandExit(event.run, event.exit);
      case 'child':
        return this.onChild();
      case 'tree':
        return this.onTree(event.snapshot);
      case 'timer':
        return this.onTimer(event.name);
      case 'health':
        return this.onHealth(event.run, event.result);
      case 'fault':
        return this.fault(event.error);
    }
  }

  // ── start-up ────────────────────────────────────────────────────────────

  private probe(): void {
    this.expectOwn(PROBE_SIGNAL);
    this.platform.kill(process.pid, PROBE_SIGNAL);
  }

  private expectOwn(signal: SignalName): void {
    this.ownSignals.set(signal, (this.ownSignals.get(signal) ?? 0) + 1);
  }

  /** One of the signals gsup caused itself: taken off the count, and not forwarded. */
  private takeOwn(signal: SignalName): boolean {
    const count = this.ownSignals.get(signal);
    if (!count) return false;
    if (count === 1) this.ownSignals.delete(signal);
    else this.ownSignals.set(signal, count - 1);
    return true;
  }

  /** A stop signal that came before the spawn (held, or taken by Node's start-up handler): no spawn then. */
  private stopSignalBeforeSpawn(): SignalName | undefined {
    const swallowed = this.options.inbox?.swallowed;
    if (swallowed) return this.rewrite(swallowed) ?? undefined;
    const held = this.queue.find((event) => event.kind === 'signal' && STOP_SIGNALS.has(this.rewrite(event.signal) ?? 'SIGKILL'));
    return held?.kind === 'signal' ? (this.rewrite(held.signal) ?? undefined) : undefined;
  }

  private finishBeforeSpawn(signal: SignalName): void {
    this.logger.notice('stop', `${signal} received before the command started: not starting it`, { signal });
    this.stoppedBeforeSpawn = signal;
    this.end({ code: null, signal });
  }

  private startRun(args: string[]): void {
    const run = spawnRun(++this.runs, this.command, args, this.config, { ...this.options, cwd: this.cwd }, this.platform, this.terminal);
    this.run = run;
    this.phase = 'running';
    if (run.pid !== undefined) {
      this.nodeChildren.add(run.pid);
      this.tree.setCommand(run.pid);
    }
    run.spawned.exited.then((exit) => this.queue.push({ kind: 'exit', run: run.id, exit }));
    if (this.health && run.pid !== undefined) {
      this.health.reset(Date.now());
      this.timers.set('health', this.health.config.intervalMs);
    }
    this.logger.debug('spawn', `started ${this.command} (pid ${run.pid ?? '-'}, target ${this.config.target})`, { pid: run.pid, target: this.config.target });
  }

  // ── signals ─────────────────────────────────────────────────────────────

  private rewrite(received: SignalName): SignalName | null {
    if (this.config.rewrite.has(received)) return this.config.rewrite.get(received)!;
    // Ctrl+Z in group mode: the command's group is orphaned (its session is not gsup's), so the
    // kernel discards SIGTSTP, SIGTTIN and SIGTTOU for it; SIGSTOP stops it as a terminal would.
    if (this.config.target === 'group' && JOB_CONTROL_SIGNALS.has(received)) return 'SIGSTOP';
    return received;
  }

  /** A signal gsup received: O(1) here — rewrite, then stop, forward, or drop it. */
  private onSignal(received: SignalName): void {
    // A burst of signals can fill the signal pipe, and a SIGCHLD in it be lost: then look now and then.
    if (++this.signalsSinceCheck >= FLOOD_SIGNALS) this.timers.ensure('check', CHECK_MS);
    if (received === 'SIGPIPE' && this.logger.takeOwnSigpipe()) return; // raised by our own write to a closed stderr
    if (this.ownSignals.size > 0 && this.takeOwn(received)) return; // the pipe probe; the terminal given up
    const signal = this.rewrite(received);
    // Job control: a rule replaces what the command gets (a stop signal included), never gsup's own suspension (dumb-init's way).
    if (JOB_CONTROL_SIGNALS.has(received)) return this.forwarder.forward(signal, { suspend: true });
    if (signal === null) {
      this.logger.info('drop', `${received} received: dropped (rewrite)`, { received });
      return;
    }
    if (signal !== received) this.logger.debug('rewrite', `${received} rewritten to ${signal}`, { received, signal });
    if (STOP_SIGNALS.has(signal)) return this.onStopSignal(signal, `${received} received`);
    this.forwarder.forward(signal);
  }

  // ── the stop sequence ───────────────────────────────────────────────────

  /**
   * A stop signal received (or a library stop request). The first starts the
   * stop; the second ends a stop delay, or is forwarded like the first (apps
   * that force their own exit on a second signal get it); the third kills.
   * A stop gsup began itself (a restart, `--on-exit stop`) counts from zero.
   */
  private onStopSignal(signal: SignalName, reason: string): void {
    switch (this.phase) {
      case 'running':
      case 'exited':
      case 'daemons':
        return this.beginStop(signal, reason, signal === 'SIGTERM' ? this.config.stopDelay : 0, 'exit', 'signal');
      case 'restarting':
        this.logger.notice('restart-cancelled', `${reason}: no restart`);
        return this.finish();
      case 'stop-delay':
        this.stop!.received++;
        this.logger.notice('stop-delay-ended', `${reason}: second stop signal, forwarding ${this.stop!.signal} now`, { signal });
        return this.sendStop();
      case 'stopping':
        return this.stopSignalAgain(signal, reason);
      case 'killing':
      case 'ending':
        return;
    }
  }

  private stopSignalAgain(signal: SignalName, reason: string): void {
    const stop = this.stop!;
    const count = ++stop.received;
    if (stop.then === 'restart') {
      // The leftovers of the last run are being stopped: stop them, but start nothing after.
      stop.then = 'exit';
      this.logger.notice('restart-cancelled', `${reason}: no restart`);
    }
    if (count >= 3) {
      this.logger.notice('kill-now', `${reason}: third stop signal, killing the tree now`, { signal });
      return this.beginKilling();
    }
    if (count === 1) return; // joins the stop gsup began itself
    this.logger.notice('stop-again', `${reason}: second stop signal, forwarding it too (a third kills)`, { signal });
    stop.again = signal;
    this.scans.request();
  }

  /** 1. The stop delay (if any), then the stop signal. */
  private beginStop(signal: SignalName, reason: string, delayMs: number, then: StopRecord['then'], cause: StopCause = 'gsup'): void {
    this.stop = new StopRecord(signal, then, cause);
    this.pauseHealth();
    this.logger.notice('stop', `${reason}: stopping the tree with ${signal} (kill timeout ${formatDuration(this.config.killTimeout)})`, {
      signal,
      reason,
      killTimeoutMs: this.config.killTimeout,
      stopDelayMs: delayMs,
    });
    if (delayMs <= 0) return this.sendStop();
    this.phase = 'stop-delay';
    this.logger.notice('stop-delay', `waiting ${formatDuration(delayMs)} before forwarding ${signal}`, { delayMs });
    this.timers.set('stop-delay', delayMs);
  }

  /** 2. The kill timeout starts; the stop signal goes out on a fresh look at the tree. */
  private sendStop(): void {
    this.phase = 'stopping';
    this.timers.clear('stop-delay');
    this.timers.set('kill-timeout', this.config.killTimeout);
    this.scans.request();
  }

  /**
   * 3. Each look while stopping: the stop signal to every root not reached
   * yet (a group whose parent exited without stopping it becomes one), pm2
   * daemons through `pm2 kill`; until nothing of the tree is alive.
   */
  private stopStep(snapshot: TreeSnapshot): void {
    const stop = this.stop!;
    stop.saw(snapshot);
    if (snapshot.alive.length === 0) return this.endStop();
    const route = this.forwarder.plan(snapshot, stop.signal, true);
    const fresh = stop.take(route.targets, snapshot);
    const pm2Kill = this.pm2KillHeld(route.pm2Kill) ? [] : stop.takePm2(route.pm2Kill, route.managed, snapshot);
    const sent = new Set([...pm2Kill.map((manager) => manager.info.pid), ...fresh.flatMap(membersOf).map((info) => info.pid)]);
    if (sent.size > 0) this.pm2?.announce(route, stop.signal, (manager) => sent.has(manager.info.pid));
    if (fresh.length > 0) this.deliverStop(fresh, stop.signal);
    if (stop.again) {
      // The stop signal received again: once to everyone the stop signal reached (pm2's apps are pm2's to stop).
      const signal = stop.again;
      stop.again = undefined;
      const again = stop.reachedOf(route.targets);
      if (again.length > 0) this.deliverStop(again, signal);
    }
    for (const manager of pm2Kill) this.spawnHelper(() => this.pm2!.kill(manager, (pid) => this.helperExited(pid)));
    this.scans.request(STOP_POLL_MS);
  }

  /**
   * A command that lives on after `pm2 start` (a bootstrap script with a
   * trap that runs `pm2 kill`) has the stop signal: it stops pm2 its own way.
   * gsup's own `pm2 kill` waits until the command is gone, for a daemon the
   * script left; never a second one racing the script's.
   */
  private pm2KillHeld(managers: Pm2Manager[]): boolean {
    const run = this.run;
    return managers.length > 0 && !run.exit && run.pid !== undefined && !managers.some((manager) => manager.info.pid === run.pid);
  }

  private deliverStop(targets: Target[], signal: SignalName): void {
    this.run.sent.add(signal);
    deliver(this.platform, targets, signal, this.relayers);
    this.logger.info('forward', `${signal} → ${describeTargets(targets)}`, { signal, targets: targets.map(describeTarget) });
  }

  /** 4. At the kill timeout (or a third stop signal): SIGKILL everything, again and again until nothing is left. */
  private beginKilling(): void {
    this.phase = 'killing';
    this.timers.clear('kill-timeout');
    const stop = this.stop!;
    stop.killStartedAt = Date.now();
    // The command's group at once, before any look (its id cannot be reused while the command is unreaped).
    const run = this.run;
    if (run.pgid !== undefined && run.unreaped()) {
      const members = this.scans.latest?.alive.filter((info) => info.pgid === run.pgid) ?? [];
      stop.killing(members, (pid) => this.platform.commandLine(pid));
      this.platform.kill(-run.pgid, 'SIGKILL');
    }
    this.scans.request();
  }

  private killStep(snapshot: TreeSnapshot): void {
    const stop = this.stop!;
    if (snapshot.alive.length === 0) return this.endStop();
    if (Date.now() - stop.killStartedAt! > MAX_KILL_MS) {
      const pids = snapshot.alive.map((info) => info.pid);
      this.logger.warn('kill-failed', `still alive after SIGKILL: ${pids.join(', ')}`, { pids });
      stop.survived(snapshot.alive);
      return this.endStop();
    }
    stop.killing(snapshot.alive, (pid) => this.platform.commandLine(pid));
    if (!this.platform.canSignal && this.platform.killTree) {
      for (const info of snapshot.alive) void this.platform.killTree(info.pid);
    } else {
      // Whole groups with one kill each (new forks included), the rest process by process.
      send(this.platform, units(snapshot, this.ownPgid), 'SIGKILL');
    }
    this.scans.request(1);
  }

  /** 5. One summary line; then gsup's exit, or the next run. */
  private endStop(): void {
    const stop = this.stop!;
    this.timers.clear('stop-delay');
    this.timers.clear('kill-timeout');
    if (stop.anyKilled) this.killed = true;
    const { message, fields } = stop.summary();
    this.logger.notice('stopped', message, fields);
    this.stop = undefined;
    if (stop.unhealthy) return this.afterUnhealthy(stop.then === 'restart');
    if (stop.then === 'restart') return this.waitToRestart();
    this.finish();
  }

  /** A helper process of gsup's own (`pm2 kill`): part of the tree a stop waits for, never sent the stop signal. */
  private spawnHelper(spawn: () => number | undefined): void {
    const pid = spawn();
    if (pid === undefined) return;
    this.nodeChildren.add(pid);
    this.helpers.add(pid);
  }

  private helperExited(pid: number): void {
    this.nodeChildren.delete(pid);
    this.helpers.delete(pid);
  }

  // ── the command's exit, restarts, daemons ──────────────────────────────

  private onCommandExit(runId: number, exit: CommandExit): void {
    const run = this.run;
    if (runId !== run.id) return;
    run.exit = exit;
    if (run.pid !== undefined) this.nodeChildren.delete(run.pid);
    // `gsup -- pm2 start …`: the command is the pm2 CLI, and its life is known to the tick.
    const command = this.tree.commandInfo;
    if (this.pm2 && command && runsPm2Cli(this.command, run.args)) this.pm2.cliLived(command, this.platform.startTimeNow());
    if (exit.errorCode !== undefined) return this.finish();
    this.logger.info('command-exit', `pid ${run.pid} left the tree: the command exited (${describeExit(exit)})`, { pid: run.pid, code: exit.code, signal: exit.signal });
    if (this.phase === 'ending') return this.finish();
    if (this.phase !== 'running') return this.treeMayBeGone();
    const decision = this.restartPolicy.decide(exit, Date.now() - run.startedAt, run.sent);
    if (decision.restart) this.restart = { ...decision, reason: `${decision.reason} (restart ${decision.attempt} of ${this.config.maxRestarts})` };
    else if (decision.reason) this.logger.warn('restart-give-up', `command ${decision.reason}`);
    this.phase = 'exited';
    if (this.config.onExit === 'exit' && !this.restart) return this.finish();
    this.reap();
    // A pm2 pid file may lead to a God daemon the command started elsewhere (or an older one to name): look then.
    if (!this.pm2?.pidFileExists() && this.treeIsGone()) return this.afterExit([]);
    this.scans.request();
  }

  /**
   * As PID 1 or subreaper (set before the spawn), every process of the tree
   * descends from gsup: orphans come to it. So once gsup has no child left
   * (zombies reaped, the command reported by libuv) and no pm2 daemon was
   * adopted from elsewhere, nothing of the tree is alive — known with no
   * look at the tree, however large it was.
   */
  private treeIsGone(): boolean {
    if (!this.reaping) return false;
    if (this.managers.some((manager) => manager.info.ppid !== process.pid)) return false;
    const any = this.platform.hasChildren?.() ?? this.platform.ownChildren?.().length;
    return any !== undefined && !any;
  }

  /** A child of gsup is gone: end the wait of a stop or for daemons if that was the last, else look sooner. */
  private treeMayBeGone(): void {
    // A stop delay ends too when the tree goes away by itself: nothing is left to wait for.
    const waiting = this.phase === 'stopping' || this.phase === 'killing' || this.phase === 'daemons' || this.phase === 'stop-delay';
    if (!waiting) return;
    if (!this.treeIsGone()) return this.scans.request();
    if (this.phase === 'daemons') return this.finish();
    this.endStop();
  }

  /** What the command left: stop it before a restart, or as `--on-exit` says (stop, stay, or exit). */
  private afterExit(leftovers: ProcessInfo[]): void {
    const exit = this.run.exit!;
    if (this.restart) {
      if (leftovers.length === 0) return this.waitToRestart();
      return this.beginStop('SIGTERM', `command ${this.restart.reason}, leaving ${leftovers.length} process(es)`, 0, 'restart');
    }
    const action = onExitAction(this.config.onExit, exitStatus(exit), leftovers, this.run.pgid ?? leftovers.find((info) => info.pid === this.run.pid)?.pgid);
    if (action === 'exit') return this.finish();
    if (action === 'stop') return this.beginStop('SIGTERM', `command exited (${describeExit(exit)}) leaving ${leftovers.length} process(es)`, 0, 'exit');
    this.phase = 'daemons';
    // `auto` stays for daemons the command handed its work to: their status becomes gsup's.
    this.stayedForDaemons = this.config.onExit === 'auto';
    this.logger.notice('waiting', `command exited (${describeExit(exit)}); waiting for ${leftovers.length} remaining process(es)`, {
      pids: leftovers.map((info) => info.pid),
    });
    this.scans.request(DAEMON_POLL_MS);
  }

  private waitToRestart(): void {
    const restart = this.restart!;
    this.phase = 'restarting';
    this.logger.notice('restart', `command ${restart.reason}: restarting in ${formatDuration(restart.delayMs)}`, { delayMs: restart.delayMs, reason: restart.reason });
    this.timers.set('restart-delay', restart.delayMs);
  }

  // ── the tree, children, timers ─────────────────────────────────────────

  private async onTree(snapshot: TreeSnapshot): Promise<void> {
    if (this.ownPgid === -1) this.ownPgid = (await this.platform.processInfo(process.pid))?.pgid ?? -1;
    this.logChanges(snapshot);
    this.pm2?.noteClis(snapshot);
    if (this.pm2 && (snapshot.joined.length > 0 || this.phase === 'exited' || this.managers.length > 0)) {
      this.managers = await this.pm2.find(snapshot);
      // A God daemon that `pm2 start` left may be known by its pid file alone (no subreaper): look again with it.
      if (this.managers.some((manager) => !snapshot.alive.some((info) => info.pid === manager.info.pid))) return this.scans.request();
    }
    this.forwarder.deliverPending(snapshot);
    switch (this.phase) {
      case 'exited':
        return this.afterExit(snapshot.alive);
      case 'stopping':
        return this.stopStep(snapshot);
      case 'killing':
        return this.killStep(snapshot);
      case 'daemons':
        if (snapshot.alive.length === 0) return this.finish();
        return this.scans.request(DAEMON_POLL_MS);
      case 'stop-delay':
        if (snapshot.alive.length === 0) return this.endStop();
        return;
    }
  }

  private logChanges(snapshot: TreeSnapshot): void {
    if (!this.logger.enabled('info')) return;
    for (const info of snapshot.joined) {
      this.logger.info('tree-join', `pid ${info.pid} joined the tree (${this.platform.commandLine(info.pid)})`, { pid: info.pid, ppid: info.ppid, pgid: info.pgid });
    }
    if (snapshot.left.length > 0) this.logger.info('tree-leave', `pid ${snapshot.left.join(', ')} left the tree`, { pids: snapshot.left });
  }

  /** SIGCHLD: reap (a batch; the rest in the next event), and look at the tree sooner where a phase waits for it. */
  private onChild(): void {
    // More zombies than a batch: the next event takes them, and looks then.
    if (!this.reap()) this.treeMayBeGone();
  }

  /** Reaps a batch; true when more wait (another `child` event is queued for them). */
  private reap(): boolean {
    if (!this.reaping) return false;
    const { reaped, more, nodeZombie } = this.reaper.reap();
    for (const exit of reaped) this.noteReaped(exit);
    if (more) this.queue.push({ kind: 'child' });
    if (nodeZombie) this.timers.ensure('check', CHECK_MS);
    return more;
  }

  /** Staying for daemons (`auto`), the last one's status becomes gsup's. */
  private noteReaped(exit: CommandExit): void {
    if (this.stayedForDaemons) this.daemonExit = exit;
  }

  private async onTimer(name: TimerName): Promise<void> {
    switch (name) {
      case 'stop-delay':
        if (this.phase === 'stop-delay') this.sendStop();
        return;
      case 'kill-timeout':
        if (this.phase !== 'stopping') return;
        this.logger.warn('kill-timeout', `kill timeout (${formatDuration(this.config.killTimeout)}) expired: sending SIGKILL`);
        return this.beginKilling();
      case 'restart-delay':
        if (this.phase === 'restarting') this.startRun(this.run.args);
        this.restart = undefined;
        return;
      case 'check':
        return this.check();
      case 'finish':
        if (this.phase === 'ending') this.finish();
        return;
      case 'health':
        return this.runProbes();
    }
  }

  // ── health checks ──────────────────────────────────────────────────────

  private healthChecks(config: HealthConfig): HealthChecks {
    const context = {
      platform: this.platform,
      cwd: this.cwd ?? '/',
      env: this.options.env ?? process.env,
      // A probe command is Node's child (libuv reaps it), and its group no part of the tree.
      spawned: (pid: number) => {
        this.nodeChildren.add(pid);
        this.tree.ignoreProbe(pid);
      },
      ended: (pid: number) => this.nodeChildren.delete(pid),
    };
    return new HealthChecks(
      config,
      this.logger,
      context,
      (run, result) => this.queue.push({ kind: 'health', run, result }),
      (error) => this.queue.push({ kind: 'fault', error }),
    );
  }

  /** Time for a round of probes: while the command (or what it handed over) runs; paused otherwise. */
  private runProbes(): void {
    const health = this.health!;
    if (this.phase === 'exited') return this.timers.set('health', health.config.intervalMs); // deciding what next: ask again later
    if (this.phase === 'running' || this.phase === 'daemons') health.start(this.run.id); // else a new run starts them again
  }

  private onHealth(runId: number, result: ProbeResult): void {
    const health = this.health!;
    if (runId !== this.run.id || (this.phase !== 'running' && this.phase !== 'daemons')) return;
    if (health.judge(result, Date.now()) !== 'unhealthy') return this.timers.set('health', health.config.intervalMs);
    // A hung event loop will not handle SIGTERM: the kill timeout ends it.
    this.beginStop('SIGTERM', 'unhealthy', 0, this.config.restart === 'never' ? 'exit' : 'restart', 'unhealthy');
  }

  private pauseHealth(): void {
    this.timers.clear('health');
    this.health?.pause();
  }

  /** After a stop for failed health checks: a restart as `--restart` says (a failure), or gsup's exit. */
  private afterUnhealthy(restart: boolean): void {
    const decision = restart ? this.restartPolicy.unhealthy(Date.now() - this.run.startedAt) : { restart: false as const };
    if (decision.restart) {
      this.restart = { ...decision, reason: `${decision.reason} (restart ${decision.attempt} of ${this.config.maxRestarts})` };
      return this.waitToRestart();
    }
    if (decision.reason) this.logger.warn('restart-give-up', `command ${decision.reason}`);
    this.unhealthyExit = true;
    this.finish();
  }

  /**
   * While signals come in (or the command's exit is awaited): is the command
   * a zombie libuv has not been told of? A full signal pipe drops SIGCHLD
   * like any signal; a SIGCHLD of our own makes libuv look again. Orphans
   * whose SIGCHLD was dropped are reaped here too.
   */
  private async check(): Promise<void> {
    const run = this.run;
    const waiting = !run.exit && run.pid !== undefined && this.phase !== 'restarting';
    const gone = waiting && !isAlive(await this.platform.processInfo(run.pid!));
    if (gone) this.platform.kill(process.pid, 'SIGCHLD');
    this.reap();
    if (gone || this.signalsSinceCheck >= FLOOD_SIGNALS || this.phase === 'ending') this.timers.set('check', CHECK_MS);
    this.signalsSinceCheck = 0;
  }

  // ── the end ────────────────────────────────────────────────────────────

  /**
   * 6. Exit with the command's status (or, having stayed for daemons, the
   * last one's) once libuv has reported it and the orphans are reaped.
   */
  private finish(): void {
    this.phase = 'ending';
    const exit = this.run.exit;
    if (!exit) {
      // The tree is empty but libuv has yet to report the command: wait (check nudges libuv).
      this.timers.ensure('check', CHECK_MS);
      return;
    }
    // A zombie is not alive, so the tree can look empty before SIGCHLD is
    // handled: reap now, so a daemon's status is not missed — waiting,
    // briefly, for zombies whose threads are still exiting.
    if (this.reaping) {
      this.reap();
      const { reaped, notYet } = this.reaper.sweep();
      for (const exit of reaped) this.noteReaped(exit);
      if (notYet > 0 && this.finalReaps++ < FINAL_REAP_TRIES) return this.timers.set('finish', FINAL_REAP_MS);
    }
    this.end(this.daemonExit ?? exit);
  }

  private end(exit: CommandExit): void {
    this.phase = 'done';
    this.timers.abort();
    this.unwatchChildren();
    this.result = {
      exitCode: this.exitCode(exit),
      code: exit.code,
      signal: exit.signal,
      killed: this.killed,
      ...(exit.errorCode !== undefined && { error: spawnErrorMessage(this.command, exit.errorCode) }),
    };
    // The loop sees 'done' after this event; outside of it (no spawn), say so now.
    if (!this.looping) this.resolveDone(this.result);
  }

  private exitCode(exit: CommandExit): number {
    if (this.failed > 0) return EXIT_INTERNAL;
    if (this.stoppedBeforeSpawn) return 128 + signalNumber(this.stoppedBeforeSpawn);
    const status = exitStatus(exit, this.config.successExit);
    // Stopped for failed health checks: an app that exits 0 on SIGTERM has still failed.
    return this.unhealthyExit && status === 0 ? 1 : status;
  }

  /**
   * An internal error: log it, then stop the tree with the normal sequence
   * (never leave it running) and exit 125. An error while stopping kills;
   * one while killing looks again and kills what is left; only errors that
   * keep coming (a fourth) end gsup at once.
   */
  private fault(error: unknown): void {
    this.failed++;
    this.logger.error('internal', `internal error: ${error instanceof Error ? error.message : String(error)}`);
    switch (this.phase) {
      case 'running':
      case 'exited':
      case 'daemons':
        return this.beginStop('SIGTERM', 'internal error', 0, 'exit');
      case 'restarting':
        return this.finish();
      case 'stop-delay':
        return this.sendStop();
      case 'stopping':
        this.stop!.then = 'exit';
        return this.beginKilling();
      case 'killing':
        // Keep killing (the next look SIGKILLs what is left); only errors that repeat end it.
        if (this.failed <= 3) return this.scans.request();
        return this.end(this.run.exit ?? { code: null, signal: null });
      case 'ending':
        if (this.failed > 3 || !this.run.exit) return this.end(this.run.exit ?? { code: null, signal: null });
        return this.finish();
    }
  }
}

