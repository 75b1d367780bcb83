import { silentLogger, type Logger } from '../../log.js';
import { currentPlatform, type Platform, type SignalName } from '../../platform/index.js';
import { signalNumber } from '../../signals.js';
import { supervisorHandle, supervisorResult } from '../config/api.js';
import type { SuperviseOptions, SupervisorHandle, SupervisorResult } from '../config/api.js';
import { resolveConfig, type SupervisorConfig } from '../config/config.js';
import { exitStatus, isWrapper } from '../machine/exit-status.js';
import { describeExit } from '../machine/format.js';
import type { ForwardFacts } from '../delivery/forwarder.js';
import type { ProbeResult } from '../health/probes.js';
import { HealthSchedule } from '../health/schedule.js';
import { SignalIntake } from './intake.js';
import {
  initialState,
  step,
  type Effect,
  type Input,
  type MachineConfig,
  type Phase,
  type State,
} from '../machine/step.js';
import { runsPm2Cli, type Pm2Manager } from '../pm2/daemons.js';
import { EventLoop, messageOf } from './event-loop.js';
import { unhandled } from './unhandled.js';
import { EventQueue, type EngineEvent } from './queue.js';
import { notStarted, startDirectory, type CommandRun } from '../children/run.js';
import type { CommandExit } from '../children/spawn.js';
import { adoptOrphans, checkIdentity, handOverTerminal, widenSignalPipe } from './start-steps.js';
import { Timers } from './timers.js';
import { LostChildWatch } from './lost-child.js';
import { logTreeChanges, type TreeSnapshot } from '../tree/tree.js';
import { wire, type Parts } from './wiring.js';

export type { SuperviseOptions, SupervisorHandle, SupervisorResult } from '../config/api.js';

/** Run a command and supervise its whole process tree. */
export function supervise(
  command: string,
  args: readonly string[] = [],
  options: SuperviseOptions = {},
): SupervisorHandle {
  return new Supervisor(command, [...args], options).handle;
}

// Once a stop's summary is out (or between runs), it has said who left: no tree lines then.
const QUIET_PHASES: ReadonlySet<Phase> = new Set(['ending', 'done', 'restarting']);
// Sent to self at start-up to find the signal pipe: ignored by default by anything it could reach.
const PROBE_SIGNAL: SignalName = 'SIGURG';

/**
 * The shell around the machine (machine/step.ts): it turns what happens (signals,
 * exits, SIGCHLD, looks at the tree, timers, probes) into inputs of the pure
 * `step`, and carries out the effects it returns. One event at a time.
 */
class Supervisor {
  readonly handle: SupervisorHandle;
  private state: State = initialState();
  private readonly config: SupervisorConfig;
  private readonly machine: MachineConfig;
  private readonly logger: Logger;
  private readonly platform: Platform;
  /** Where every run starts, as an absolute path (the CLI has moved gsup to /). */
  private readonly cwd: string | undefined;
  private readonly intake: SignalIntake;
  private readonly queue: EventQueue;
  private readonly timers = new Timers((name) => this.queue.push({ kind: 'timer', name }));
  private readonly lostChild: LostChildWatch;
  private readonly health?: HealthSchedule;
  /** What acts on the world: the tree and its looks, gsup's children, forwards, stop rounds, pm2, probes. */
  private readonly parts: Parts;
  private run: CommandRun = notStarted();
  /** The look whose input is being decided on: the stop and kill rounds act on it. */
  private looked?: TreeSnapshot;
  private managers: Pm2Manager[] = [];
  private ownPgid = -1;
  /** The argv prefix that gives each run gsup's terminal (setsid -c), when gsup handed it over. */
  private terminal?: string[];
  private readonly inputs: Input[] = [];
  private readonly loop: EventLoop;
  private result: SupervisorResult = { exitCode: 125, code: null, signal: null, killed: false };
  private resolveDone: (result: SupervisorResult) => void = () => {};
  private unwatchChildren: () => void = () => {};

  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly options: SuperviseOptions,
  ) {
    const config = (this.config = resolveConfig(options));
    this.machine = { ...config, probes: config.health !== undefined };
    this.cwd = startDirectory(options.cwd);
    this.logger = options.logger ?? silentLogger;
    this.platform = options.platform ?? currentPlatform();
    this.intake = new SignalIntake(config.rewrite, config.target, this.logger);
    const urgent = (event: EngineEvent) =>
      event.kind === 'stop' ||
      event.kind === 'exit' ||
      event.kind === 'fault' ||
      (event.kind === 'signal' && this.intake.isStop(event.signal));
    this.queue = new EventQueue(urgent, () => void this.loop.run());
    const fault = (error: unknown) => this.apply({ kind: 'fault', message: messageOf(error) });
    this.loop = new EventLoop(
      this.queue,
      (event) => this.dispatch(event),
      fault,
      () => this.state.phase === 'done',
      () => this.resolveDone(this.result),
    );
    this.parts = wire(
      command,
      config,
      { ...options, cwd: this.cwd },
      this.platform,
      this.logger,
      this.timers.signal,
      (event) => this.queue.push(event),
    );
    this.lostChild = new LostChildWatch(this.timers, this.parts.children);
    if (this.parts.health) this.health = new HealthSchedule(this.parts.health, this.timers, options.status);
    const exited = this.main();
    const stop = (signal: SignalName = 'SIGTERM') => (
      this.queue.push({ kind: 'stop', signal: this.intake.stopRequested(signal), reason: 'stop requested' }),
      exited
    );
    this.handle = supervisorHandle(
      () => this.run,
      (signal) => this.loop.now({ kind: 'signal', signal }),
      stop,
      exited,
    );
  }

  /** Start-up, guarded step by step (tini's main); then the loop runs on each event until the end. */
  private main(): Promise<SupervisorResult> {
    const done = new Promise<SupervisorResult>((resolve) => (this.resolveDone = resolve));
    const { inbox } = this.options;
    inbox?.attach((signal) => this.loop.now({ kind: 'signal', signal }));
    // Before the spawn: an orphan of its first millisecond comes here too.
    this.parts.children.reaping = adoptOrphans(this.platform, this.logger, this.config.subreaper);
    checkIdentity(this.platform, this.logger);
    // CLI only: the probe is a signal to this very process (and is not forwarded).
    if (inbox)
      widenSignalPipe(
        this.platform,
        this.logger,
        () => (this.intake.expectOwn(PROBE_SIGNAL), this.platform.kill(process.pid, PROBE_SIGNAL)),
      );
    this.unwatchChildren = this.platform.watchChildren(() => this.queue.push({ kind: 'child' }));
    const stopFirst = this.intake.stopBeforeSpawn(inbox?.swallowed, this.queue);
    if (
      !stopFirst &&
      this.options.terminal &&
      this.config.target === 'group' &&
      (this.options.stdio ?? 'inherit') === 'inherit'
    ) {
      this.terminal = handOverTerminal(this.platform, this.logger, (signal) => this.intake.expectOwn(signal));
    }
    this.apply({ kind: 'start', stopFirst });
    this.loop.start();
    // The end waits for what deaths.ts still has to say (an OOM kill), a second at most.
    return done.then(async (result) => (await this.parts.deaths.settled(), result));
  }

  /** One event, shared by the loop and the fast path: what it means, as inputs of the machine. */
  private dispatch(event: EngineEvent): void | Promise<void> {
    this.parts.trim?.touch();
    switch (event.kind) {
      case 'signal':
        return this.onSignal(event.signal);
      case 'stop':
        return this.apply({ kind: 'stop-signal', signal: event.signal, reason: event.reason });
      case 'exit':
        return this.onExit(event.run, event.exit);
      case 'child':
        if (this.reap()) return;
        return this.apply({ kind: 'child-gone', treeGone: this.treeGone() });
      case 'tree':
        return this.onTree(event.snapshot);
      case 'timer':
        if (event.name === 'check') return this.lostChild.check(this.run, this.state.phase, () => this.reap());
        return this.apply({ kind: 'timer', name: event.name });
      case 'health':
        return this.onHealth(event.run, event.result);
      case 'app-said':
        return this.apply(event);
      case 'fault':
        return this.apply({ kind: 'fault', message: messageOf(event.error) });
      default:
        return unhandled(event); // a new kind of event does not compile until it is dispatched here
    }
  }

  /** Runs the machine on an input, and on what its effects bring back, in order. */
  private apply(input: Input): void {
    this.inputs.push(input);
    if (this.inputs.length > 1) return; // an effect's input: after the current one's effects
    try {
      while (this.inputs.length > 0) {
        const { state, effects } = step(this.state, this.inputs[0], {
          now: Date.now(),
          config: this.machine,
          signalNumber,
        });
        this.state = state;
        for (const effect of effects) this.perform(effect);
        this.inputs.shift();
      }
    } finally {
      this.inputs.length = 0; // an effect that threw: the fault that follows must find the machine free
    }
    this.options.status?.observe(this.state, this.health?.state, this.run.unreaped());
  }

  private perform(effect: Effect): void {
    const looked = this.looked ?? this.parts.scans.latest;
    switch (effect.kind) {
      case 'spawn':
        return this.startRun(effect.run);
      case 'look':
        return this.parts.scans.request(effect.delayMs);
      case 'set-timer':
        return this.timers.set(effect.name, effect.ms);
      case 'ensure-timer':
        return this.timers.ensure(effect.name, effect.ms);
      case 'clear-timer':
        return this.timers.clear(effect.name);
      case 'log':
        return this.logger.log(effect.level, effect.event, effect.message, effect.fields);
      case 'pause-health':
      case 'probe':
      case 'schedule-probe':
        return this.health?.carryOut(effect);
      case 'begin-stop':
        return this.parts.stops.begin(Date.now());
      case 'stop-round':
        if (looked)
          for (const signal of this.parts.stops.round(
            looked,
            effect.signal,
            effect.again,
            this.run,
            this.forwardFacts(),
          ))
            this.options.status?.countForward(signal);
        return;
      case 'kill-command-group':
        return this.parts.stops.killCommandGroup(this.run, this.parts.scans.latest);
      case 'kill-round':
        return looked && this.parts.stops.killRound(looked, this.ownPgid);
      case 'give-up-killing':
        return this.parts.stops.giveUp(looked?.alive ?? []);
      case 'end-stop': {
        const took = this.parts.stops.end(Date.now()); // outside `?.(…)`: it runs with no board too
        return this.options.status?.stopTook(took);
      }
      case 'sweep': {
        const { reaped, notYet } = this.parts.children.sweep();
        this.apply({ kind: 'reaped', exits: reaped });
        return this.apply({ kind: 'swept', notYet });
      }
      case 'exit':
        return this.end(effect.exitCode, effect.exit);
      default:
        return unhandled(effect); // a new kind of effect does not compile until it is carried out here
    }
  }

  private onSignal(received: SignalName): void {
    this.lostChild.signalled();
    const intake = this.intake.take(received);
    if (intake.kind === 'stop') this.apply({ kind: 'stop-signal', signal: intake.signal, reason: intake.reason });
    else if (intake.kind === 'forward') {
      if (intake.signal) this.options.status?.countForward(intake.signal);
      this.parts.forwarder.forward(intake.signal, this.forwardFacts(), { suspend: intake.suspend, received });
    }
    this.intake.note(received, intake);
  }

  private onExit(runId: number, exit: CommandExit): void {
    const run = this.run;
    if (runId !== run.id) return;
    run.exit = exit;
    if (run.pid !== undefined) this.parts.children.spawnedByNode.delete(run.pid);
    if (this.options.status) this.options.status.lastExitCode = exitStatus(exit, this.config.successExit, signalNumber);
    // `gsup -- pm2 start …`: the command is the pm2 CLI, and its life is known to the tick.
    const command = this.parts.tree.commandInfo;
    if (this.parts.pm2 && command && runsPm2Cli(this.command, run.args))
      this.parts.pm2.cliLived(command, this.platform.startTimeNow());
    if (exit.errorCode === undefined) {
      this.logger.info('command-exit', `pid ${run.pid} left the tree: the command exited (${describeExit(exit)})`, {
        pid: run.pid,
        code: exit.code,
        signal: exit.signal,
      });
    }
    this.reap();
    const mayHaveDaemon = this.parts.pm2?.pidFileExists() ?? false;
    const wrapper = isWrapper(command && command.pid === run.pid ? command.name : this.command);
    const treeGone = this.treeGone();
    this.apply({ kind: 'command-exit', run: runId, exit, sent: run.sent, treeGone, mayHaveDaemon, wrapper });
  }

  /** Reaps a batch (its statuses to the machine); true when more wait (another `child` event is queued for them). */
  private reap(): boolean {
    const { reaped, more, nodeZombie } = this.parts.children.reap();
    if (reaped.length > 0) this.apply({ kind: 'reaped', exits: reaped });
    if (more) this.queue.push({ kind: 'child' });
    if (nodeZombie) this.lostChild.soon();
    return more;
  }

  private treeGone = (): boolean =>
    this.parts.children.treeGone(this.managers.some((manager) => manager.info.ppid !== process.pid));

  private async onTree(snapshot: TreeSnapshot): Promise<void> {
    if (this.ownPgid === -1) this.ownPgid = (await this.platform.processInfo(process.pid))?.pgid ?? -1;
    if (this.logger.enabled('info') && !QUIET_PHASES.has(this.state.phase))
      logTreeChanges(this.logger, this.parts.tree, snapshot);
    this.options.status?.treeLooked(snapshot.alive.length);
    this.parts.pm2?.noteClis(snapshot);
    if (this.parts.pm2 && (snapshot.joined.length > 0 || this.state.phase === 'exited' || this.managers.length > 0)) {
      this.managers = await this.parts.pm2.find(snapshot);
      // A God daemon that `pm2 start` left may be known by its pid file alone (no subreaper): look again with it.
      if (this.managers.some((manager) => !snapshot.alive.some((info) => info.pid === manager.info.pid)))
        return this.parts.scans.request();
    }
    this.parts.forwarder.deliverPending(snapshot, this.forwardFacts());
    if (this.state.phase === 'stop-delay') this.parts.stops.saw(snapshot);
    const run = this.run;
    this.looked = snapshot;
    try {
      this.apply({
        kind: 'looked',
        alive: snapshot.alive,
        commandPgid: run.pgid ?? snapshot.alive.find((info) => info.pid === run.pid)?.pgid,
      });
    } finally {
      this.looked = undefined;
    }
  }

  private onHealth(runId: number, result: ProbeResult): void {
    const input = this.health?.answered(this.state, runId, result);
    if (input) this.apply(input);
  }

  private startRun(id: number): void {
    const run = this.parts.spawnRun(id, this.args, this.terminal);
    this.run = run;
    if (run.pid !== undefined) (this.parts.children.spawnedByNode.add(run.pid), this.parts.tree.setCommand(run.pid));
    run.spawned.exited.then((exit) => this.queue.push({ kind: 'exit', run: run.id, exit }));
    if (run.pid !== undefined) this.health?.started();
    this.logger.debug('spawn', `started ${this.command} (pid ${run.pid ?? '-'}, target ${this.config.target})`, {
      pid: run.pid,
      target: this.config.target,
    });
  }

  private forwardFacts(): ForwardFacts {
    const {
      run,
      managers,
      ownPgid,
      parts: { children },
    } = this;
    return {
      run,
      managers,
      ownPgid,
      helpers: children.helpers,
      reaping: children.reaping,
      nodeChildren: children.spawnedByNode,
    };
  }

  private end(exitCode: number, exit: CommandExit): void {
    this.timers.abort();
    this.unwatchChildren();
    this.parts.ready?.close();
    this.result = supervisorResult(this.command, exitCode, exit, this.parts.stops.killed);
    // The loop sees 'done' after this event; outside of it (no spawn), say so now.
    if (!this.loop.busy) this.resolveDone(this.result);
  }
}
