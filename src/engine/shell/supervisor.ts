import { silentLogger, type Logger } from '../../output/log.js';
import { currentPlatform, type Platform, type SignalName } from '../../platform/index.js';
import { signalNumber } from '../../platform/signals.js';
import { supervisorHandle, supervisorResult } from '../config/api.js';
import type { SuperviseOptions, SupervisorHandle, SupervisorResult } from '../config/api.js';
import { resolveConfig, type SupervisorConfig } from '../config/config.js';
import { reloadableSignals } from '../config/reload-signal.js';
import { HealthSchedule } from '../health/schedule.js';
import { initialState, step, type Effect, type Input, type MachineConfig, type State } from '../machine/step.js';
import { failedRun, notStarted, startDirectory, type CommandRun } from '../children/run.js';
import { EventLoop, messageOf } from './event-loop.js';
import { SignalIntake } from './intake.js';
import { LostChildWatch } from './lost-child.js';
import { EventQueue, type EngineEvent } from './queue.js';
import { adoptOrphans, handOverTerminal, settleStart } from './start-steps.js';
import { effectTable, eventTable, type Shell, type Table } from './tables.js';
import { Timers } from './timers.js';
import { wire, type Parts } from './wiring.js';
import type { CommandExit, Pm2Manager } from '../machine/values.js';

export type { SuperviseOptions, SupervisorHandle, SupervisorResult } from '../config/api.js';

/** Run a command and supervise its whole process tree. */
export function supervise(
  command: string,
  args: readonly string[] = [],
  options: SuperviseOptions = {},
): SupervisorHandle {
  return new Supervisor(command, [...args], options).handle;
}

// Sent to self at start-up to find the signal pipe: ignored by default by anything it could reach.
const PROBE_SIGNAL: SignalName = 'SIGURG';

/** The handler of this value's kind, called with it. */
function dispatch<T extends { kind: string }, R>(table: Table<T, R>, value: T): R {
  return (table[value.kind as T['kind']] as (value: T) => R)(value);
}

/**
 * The shell around the machine (machine/step.ts): it turns what happens (signals,
 * exits, SIGCHLD, looks at the tree, timers, probes) into inputs of the pure
 * `step`, and carries out the effects it returns (both through tables.ts). One
 * event at a time. Here: its start-up steps, and the machine's runs.
 */
class Supervisor implements Shell {
  readonly handle: SupervisorHandle;
  state: State = initialState();
  readonly config: SupervisorConfig;
  private readonly machine: MachineConfig;
  readonly logger: Logger;
  readonly platform: Platform;
  /** Where every run starts, as an absolute path (the CLI has moved gsup to /). */
  private readonly cwd: string | undefined;
  readonly intake: SignalIntake;
  readonly queue: EventQueue;
  readonly timers = new Timers((name) => this.queue.push({ kind: 'timer', name }));
  readonly lostChild: LostChildWatch;
  readonly health: HealthSchedule | undefined;
  readonly parts: Parts;
  run: CommandRun = notStarted();
  beside: CommandRun | undefined;
  managers: Pm2Manager[] = [];
  ownPgid = -1;
  /** The argv prefix that gives each run gsup's terminal (setsid -c), when gsup handed it over. */
  private terminal?: string[];
  private saidNoTerminal = false;
  private readonly inputs: Input[] = [];
  private readonly loop: EventLoop;
  private readonly effects: Table<Effect, void>;
  private readonly events: Table<EngineEvent, void | Promise<void>>;
  /** The machine said its end (the `end` effect): nothing more is taken. */
  private over = false;
  private result: SupervisorResult = { exitCode: 125, code: null, signal: null, killed: false };
  private resolveDone: (result: SupervisorResult) => void = () => {};
  private unwatchChildren: () => void = () => {};

  constructor(
    readonly command: string,
    private readonly args: string[],
    readonly options: SuperviseOptions,
  ) {
    const config = (this.config = resolveConfig(options, (options.listen?.sockets.names.length ?? 0) > 0));
    this.cwd = startDirectory(options.cwd);
    this.logger = options.logger ?? silentLogger;
    this.platform = options.platform ?? currentPlatform();
    this.intake = new SignalIntake(config.rewrite, config.target, this.logger, config.reloadSignal);
    // A run is retired with SIGTERM as a rule rewrites it (-r TERM:INT), as the orchestrator's SIGTERM would be.
    const retireSignal = this.intake.stopRequested('SIGTERM');
    const listen = options.listen && { names: options.listen.sockets.names, preload: options.listen.preload };
    const reload = { signal: config.reloadSignal, candidates: reloadableSignals(config.rewrite) };
    this.machine = {
      ...config,
      probes: config.health !== undefined,
      retireSignal,
      reload,
      ...(listen && { listen }),
    };
    const urgent = (event: EngineEvent) =>
      event.kind === 'stop' ||
      event.kind === 'command-exit' ||
      event.kind === 'fault' ||
      (event.kind === 'signal' && this.intake.isStop(event.signal));
    this.queue = new EventQueue(urgent, () => void this.loop.run());
    const fault = (error: unknown) => this.apply({ kind: 'fault', message: messageOf(error) });
    this.loop = new EventLoop(
      this.queue,
      (event) => this.dispatch(event),
      fault,
      () => this.over,
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
    this.health = this.parts.health && new HealthSchedule(this.parts.health, this.timers, options.status);
    if (config.reloadSignal && options.status) options.status.reloads = { ok: 0, failed: 0, killed: 0 };
    this.effects = effectTable(this);
    this.events = eventTable(this);
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
    // A reload signal before the first spawn reloads nothing: the machine drops it, saying so.
    for (const reason of this.intake.reloadsBeforeSpawn(this.queue)) this.apply({ kind: 'reload', reason });
    this.apply({ kind: 'start', stopFirst });
    // Once the command has run a while (AfterStart): none of it is needed before, and `gsup -- true` need not
    // wait for it. CLI only: the signal pipe's probe is a signal to this very process (and is not forwarded).
    const probe = inbox && (() => (this.intake.expectOwn(PROBE_SIGNAL), this.platform.kill(process.pid, PROBE_SIGNAL)));
    const ownGroup = (pgid: number) => (this.ownPgid = pgid);
    const { afterStart } = this.parts;
    afterStart.later(() => {
      if (this.over) return;
      settleStart(this.platform, this.logger, this.parts.pm2, ownGroup, probe);
      this.logger.ready();
    });
    afterStart.spawned();
    this.loop.start();
    // The end waits for what deaths.ts still has to say (an OOM kill), a second at most.
    return done.then(async (result) => (await this.parts.deaths.settled(), result));
  }

  /** One event, shared by the loop and the fast path: what it means, as inputs of the machine (tables.ts). */
  private dispatch(event: EngineEvent): void | Promise<void> {
    try {
      return dispatch(this.events, event);
    } finally {
      this.parts.trim?.touch(); // after the event's acts (forward first)
    }
  }

  /** Runs the machine on an input, and on what its effects bring back, in order. */
  apply(input: Input): void {
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
        for (const effect of effects) dispatch(this.effects, effect);
        this.inputs.shift();
      }
    } finally {
      this.inputs.length = 0; // an effect that threw: the fault that follows must find the machine free
    }
    this.options.status?.observe(this.state, this.health?.state, this.run.unreaped());
  }

  startRun(id: number): void {
    // The last run's tree is gone (restarts wait for it): its channels (a report channel, a notify socket) go.
    this.retire(this.run.id);
    const run = this.spawn(id, this.terminal, true);
    this.run = run;
    if (run.pid !== undefined) this.health?.started();
    this.logger.debug('spawn', `started ${this.command} (pid ${run.pid ?? '-'}, target ${this.config.target})`, {
      pid: run.pid,
      target: this.config.target,
    });
  }

  /** A reload: run `id` starts beside the current one (never with the terminal, which the first run's session has). */
  startNext(id: number): void {
    if (this.terminal && !this.saidNoTerminal) {
      this.saidNoTerminal = true;
      this.logger.notice('reload-no-terminal', "a reloaded run gets no controlling terminal (the first run's has it)");
    }
    this.beside = this.spawn(id, undefined, false);
    const { pid } = this.beside;
    this.logger.debug(
      'spawn-next',
      `started ${this.command} as run ${id} (pid ${pid ?? '-'}) beside run ${this.run.id}`,
      {
        pid,
        run: id,
      },
    );
  }

  /** Run `id`; one that could not be prepared or spawned ends at once with that failure (the machine decides). */
  private spawn(id: number, terminal: string[] | undefined, current: boolean): CommandRun {
    let run: CommandRun;
    try {
      run = this.parts.spawnRun(id, this.args, terminal, !current);
    } catch (error) {
      run = failedRun(id, this.args, error);
    }
    const { pid } = run;
    if (pid !== undefined) {
      this.parts.children.nodeChildren.add(pid);
      // A restart while a run retires beside (a reload's old run): its part of each look is still told apart.
      this.parts.tree.setCommand(pid, id, current, current ? this.beside?.id : undefined);
    }
    run.spawned.exited.then((exit) => {
      if (pid !== undefined) this.parts.tree.wasReaped(pid); // Node reaped it: its pid may name another process now
      this.queue.push({ kind: 'command-exit', run: run.id, exit });
    });
    return run;
  }

  /** A reload handed over: run `to` (beside) is the current run, the other beside it; its health checks begin. */
  handOver(to: number, kept: boolean): void {
    const next = this.beside;
    if (next?.id !== to) return;
    [this.run, this.beside] = [next, this.run];
    this.parts.tree.setCurrent(to);
    this.parts.listen?.samples.settled(to);
    this.health?.started(kept);
  }

  /** The run beside is retired: its tree is gone, what was its own goes. */
  retired(id: number): void {
    if (this.beside?.id !== id) return;
    this.beside = undefined;
    this.parts.tree.liveRuns([this.run.id]);
    this.retire(id);
  }

  /** Run `id` is over: what was its own alone (per run: two may live at once) is let go. */
  private retire(id: number): void {
    this.parts.ready?.retire(id);
    this.parts.listen?.handover.retire(id);
    this.parts.listen?.samples.ended(id);
  }

  end(exitCode: number, exit: CommandExit): void {
    this.over = true;
    this.timers.abort();
    this.unwatchChildren();
    this.parts.ready?.close();
    this.parts.listen?.handover.close();
    this.parts.listen?.samples.close();
    this.result = supervisorResult(this.command, exitCode, exit, this.parts.stops.killed);
    // The loop sees 'done' after this event; outside of it (no spawn), say so now.
    if (!this.loop.busy) this.resolveDone(this.result);
  }
}
