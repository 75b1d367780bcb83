import type { Logger } from '../../output/log.js';
import type { Platform, SignalName } from '../../platform/index.js';
import { signalNumber } from '../../platform/signals.js';
import type { SuperviseOptions } from '../config/api.js';
import type { SupervisorConfig } from '../config/config.js';
import type { CommandRun } from '../children/run.js';
import type { ForwardFacts } from '../delivery/forwarder.js';
import type { HealthSchedule } from '../health/schedule.js';
import { exitStatus, isWrapper } from '../machine/outcomes/exit-status.js';
import { describeExit } from '../machine/format.js';
import { leftoversAwaited, treeQuiet } from '../machine/queries.js';
import type { Effect, Input, State } from '../machine/step.js';
import { stopRoundSignal } from '../machine/stop/stop-sequence.js';
import { partOf, retireRoundSignal } from '../machine/runs/retire.js';
import { runsPm2Cli } from '../pm2/daemons.js';
import { logTreeChanges } from '../tree/changes.js';
import { messageOf } from './event-loop.js';
import type { SignalIntake } from './intake.js';
import type { LostChildWatch } from './lost-child.js';
import type { EngineEvent, EventQueue } from './queue.js';
import type { Timers } from './timers.js';
import type { Parts } from './wiring.js';
import type { CommandExit, Pm2Manager, Snapshot } from '../machine/values.js';

// The shell's two tables: what each event means (as inputs of the machine), and what each effect of the step does
// in the world. Every kind has its entry, or the build fails.

/**
 * A handler for each kind of a union, typed by kind: a kind without one (or
 * one for a kind that does not exist) does not compile. The shell's events
 * and effects are carried out through two such tables (supervisor.ts calls
 * the entry of each value's kind).
 */
export type Table<T extends { kind: string }, R> = { [K in T['kind']]: (value: Extract<T, { kind: K }>) => R };

/** What the effect table and the event dispatch see of the supervisor (supervisor.ts). */
export interface Shell {
  readonly command: string;
  readonly config: SupervisorConfig;
  readonly options: SuperviseOptions;
  readonly platform: Platform;
  readonly logger: Logger;
  /** What acts on the world: the tree and its looks, gsup's children, forwards, stop rounds, pm2, probes. */
  readonly parts: Parts;
  readonly timers: Timers;
  readonly health: HealthSchedule | undefined;
  readonly intake: SignalIntake;
  readonly lostChild: LostChildWatch;
  readonly queue: EventQueue;
  /** The machine's state, to ask things of (its queries: runOn, treeQuiet…), never to decide on. */
  readonly state: State;
  readonly run: CommandRun;
  /** During a reload, the run beside the current one (the next, or one being retired). */
  readonly beside: CommandRun | undefined;
  /** The pm2 managers the last look found. */
  managers: Pm2Manager[];
  /** gsup's own process group: never a target. */
  ownPgid: number;
  /** Runs the machine on an input, and on what its effects bring back, in order. */
  apply(input: Input): void;
  /** Starts run `id` of the command; a reload's next run, beside the current one; a reload hands over. */
  startRun(id: number): void;
  startNext(id: number): void;
  handOver(to: number, kept: boolean): void;
  /** The run beside is retired (its tree gone). */
  retired(id: number): void;
  /** The supervision is over: gsup exits with `exitCode`. */
  end(exitCode: number, exit: CommandExit): void;
}

/**
 * What each effect of the step does in the world, one entry per kind: an
 * effect nobody carries out does not compile. Each carries what it acts on
 * (a stop round its look); the shell holds nothing for the effect to come,
 * but the last look's names for the kill of the command's group (its summary).
 */
export function effectTable(shell: Shell): Table<Effect, void> {
  const { parts, timers, logger, options } = shell;
  const health = (effect: Extract<Effect, { kind: 'pause-health' | 'probe' | 'schedule-probe' }>) =>
    shell.health?.carryOut(effect);
  return {
    spawn: (effect) => shell.startRun(effect.run),
    'spawn-next': (effect) => shell.startNext(effect.run),
    'hand-over': (effect) => shell.handOver(effect.to, effect.health === 'kept'),
    'begin-retire': (effect) => parts.stops.beginRetire(effect.run, Date.now()),
    'end-retire': (effect) => {
      parts.stops.endRetire(effect.run, effect.exit, effect.cause, Date.now());
      shell.retired(effect.run);
    },
    look: (effect) => parts.looks.take(effect.delayMs),
    'set-timer': (effect) => timers.set(effect.name, effect.ms),
    'ensure-timer': (effect) => timers.ensure(effect.name, effect.ms),
    'clear-timer': (effect) => timers.clear(effect.name),
    log: (effect) => logger.log(effect.level, effect.event, effect.message, effect.fields),
    'pause-health': health,
    probe: health,
    'schedule-probe': health,
    'begin-stop': () => parts.stops.begin(Date.now()),
    'count-seen': (effect) => parts.stops.saw(effect.snapshot),
    'stop-round': (effect) => {
      const { signals, groups } = parts.stops.round(effect, runOf(shell, effect.run));
      for (const signal of signals) options.status?.countForward(signal);
      // What went to whole groups, and when: the ledger keeps it (who was in one then has had the signal).
      if (effect.targets.length > 0) shell.apply({ kind: 'round-sent', run: effect.run, groups });
    },
    'kill-command-group': (effect) => {
      const retiring = effect.run === shell.run.id ? undefined : effect.run;
      parts.stops.killCommandGroup(runOf(shell, effect.run), parts.looks.last, retiring);
    },
    'kill-round': (effect) => parts.stops.killRound(effect.snapshot, shell.ownPgid, effect.run),
    'give-up-killing': (effect) => parts.stops.giveUp(effect.alive, effect.run),
    'end-stop': () => {
      const took = parts.stops.end(Date.now()); // outside `?.(…)`: it runs with no board too
      options.status?.stopTook(took);
    },
    sweep: () => {
      const { reaped, notYet } = parts.children.sweep();
      shell.apply({ kind: 'reaped', exits: reaped });
      shell.apply({ kind: 'swept', notYet });
    },
    end: (effect) => shell.end(effect.exitCode, effect.exit),
    'check-sockets': (effect) => {
      const sockets = parts.listen?.sockets;
      const lost = sockets?.check(`before run ${effect.run}`, logger) ?? [];
      sockets?.fresh(); // a restart: the last run's tree is gone
      shell.apply({ kind: 'sockets-checked', run: effect.run, lost });
    },
    'shut-sockets': (effect) => parts.listen?.sockets.shut(effect.names, { reason: effect.reason, logger }),
    tell: (effect) => parts.listen?.handover.tell(effect.run, effect.word),
    'sample-takers': (effect) => {
      // No samples here (no --listen parts): nothing more to be seen, said at once.
      if (parts.listen) parts.listen.samples.sample(effect.run, effect.why);
      else shell.apply({ kind: 'takers-sampled', run: effect.run, why: effect.why });
    },
  };
}

/**
 * What each event means, as inputs of the machine, one entry per kind: an
 * event nobody handles does not compile. Shared by the loop and the fast path.
 */
export function eventTable(shell: Shell): Table<EngineEvent, void | Promise<void>> {
  return {
    signal: (event) => signalled(shell, event.signal),
    stop: (event) => askedToStop(shell, event.signal, event.reason),
    'command-exit': (event) => exited(shell, event.run, event.exit),
    child: () => {
      if (!reap(shell)) shell.apply({ kind: 'child-gone', treeGone: treeGone(shell) });
    },
    looked: (event) => looked(shell, event.snapshot),
    timer: (event) =>
      event.name === 'check'
        ? shell.lostChild.check(shell.run, shell.state, () => reap(shell))
        : shell.apply({ kind: 'timer', name: event.name }),
    health: (event) => {
      const input = shell.health?.answered(shell.state, event.run, event.result);
      if (input) shell.apply(input);
    },
    'app-said': (event) => shell.apply(event),
    held: (event) => {
      const { input } = event;
      if (input.kind === 'socket-taken') shell.parts.listen?.samples.taken(input.run, input.name);
      shell.apply(input);
    },
    fault: (event) => shell.apply({ kind: 'fault', message: messageOf(event.error) }),
  };
}

/** gsup is asked to stop: the machine decides (and sends first), then the CLI's word (its V8 tuned for the stop). */
function askedToStop(shell: Shell, signal: SignalName, reason: string): void {
  shell.apply({ kind: 'stop-signal', signal, reason });
  shell.options.stopping?.();
}

/** A signal received: a stop goes to the machine; any other is forwarded now (forward first, log after). */
function signalled(shell: Shell, received: SignalName): void {
  const intake = shell.intake.take(received);
  if (intake.kind === 'stop') askedToStop(shell, intake.signal, intake.reason);
  else if (intake.kind === 'reload') shell.apply({ kind: 'reload', reason: intake.reason });
  else if (intake.kind === 'forward') {
    if (intake.signal) shell.options.status?.countForward(intake.signal);
    const how = { suspend: intake.suspend, received };
    shell.parts.forwarder.forward(intake.signal, forwardFacts(shell), how);
  }
  shell.intake.note(received, intake);
  shell.lostChild.signalled();
}

/** Run `id`: the current one, or the one beside it (undefined: the current one, a stop of the whole tree). */
function runOf(shell: Shell, id: number | undefined): CommandRun {
  return id !== undefined && shell.beside?.id === id ? shell.beside : shell.run;
}

function exited(shell: Shell, runId: number, exit: CommandExit): void {
  const { parts, logger, options } = shell;
  const current = runId === shell.run.id;
  const run = current ? shell.run : shell.beside?.id === runId ? shell.beside : undefined;
  if (!run) return;
  run.exit = exit;
  if (run.pid !== undefined) parts.children.nodeChildren.delete(run.pid);
  parts.listen?.samples.ended(runId);
  // gsup_last_exit_code speaks of the current run only (a reload's other run has its own line).
  if (current && options.status) options.status.lastExitCode = exitStatus(exit, shell.config.successExit, signalNumber);
  // `gsup -- pm2 start …`: the command is the pm2 CLI, and its life is known to the tick.
  const command = parts.tree.commandInfo;
  if (current && parts.pm2 && command && runsPm2Cli(shell.command, run.args))
    parts.pm2.cliLived(command, shell.platform.startTimeNow());
  if (exit.errorCode === undefined) {
    const whose = current ? 'the command' : `run ${runId}'s command`;
    const message = `pid ${run.pid} left the tree: ${whose} exited (${describeExit(exit)})`;
    logger.info('command-exit', message, {
      pid: run.pid,
      run: runId,
      code: exit.code,
      signal: exit.signal,
      signo: exit.signo,
    });
  }
  reap(shell);
  const mayHaveDaemon = parts.pm2?.pidFileExists() ?? false;
  const wrapper = isWrapper(command && command.pid === run.pid ? command.name : shell.command);
  const gone = treeGone(shell);
  shell.apply({ kind: 'command-exit', run: runId, exit, sent: run.sent, treeGone: gone, mayHaveDaemon, wrapper });
  // Held sockets: still listening after this run (any holder can shutdown() one)? One that is not is bound again,
  // before the next run's own check: connections queue meanwhile. Once the machine has decided: where gsup ends
  // with this exit, they are shut by now, and nothing is looked at on the way out.
  parts.listen?.sockets.check(`after run ${runId}`, logger);
}

/** A look at the tree: what waited for it goes out, and the machine decides on it (with a stop round's route). */
async function looked(shell: Shell, snapshot: Snapshot): Promise<void> {
  const { parts, logger, platform } = shell;
  // Read at start-up; a look before that read is answered (`ps` elsewhere) waits for it.
  if (shell.ownPgid === -1) shell.ownPgid = (await platform.processInfo(process.pid))?.pgid ?? -1;
  if (logger.enabled('info') && !treeQuiet(shell.state)) logTreeChanges(logger, parts.tree, snapshot);
  shell.options.status?.treeLooked(snapshot.alive.length);
  parts.pm2?.noteClis(snapshot);
  if (parts.pm2 && (snapshot.joined.length > 0 || leftoversAwaited(shell.state) || shell.managers.length > 0)) {
    shell.managers = await parts.pm2.find(snapshot);
    // A God daemon that `pm2 start` left may be known by its pid file alone (no subreaper): look again with it.
    if (shell.managers.some((manager) => !snapshot.alive.some((info) => info.pid === manager.info.pid)))
      return parts.looks.take();
  }
  const facts = forwardFacts(shell);
  parts.forwarder.deliverPending(snapshot, facts);
  const { run } = shell;
  const signal = stopRoundSignal(shell.state);
  // A stop round's route: its roots, and which processes are relayers (their command lines, read in the look).
  const route =
    signal === undefined
      ? undefined
      : {
          ...parts.forwarder.plan(snapshot, true, facts),
          commandPid: run.pid,
          relayers: parts.relayers.keys(snapshot.alive),
        };
  // A retiring run's round: the same, on its part of the look alone.
  const retire = retireRoundSignal(shell.state);
  const part = retire && snapshot.runs && partOf(snapshot, retire.run);
  const retireRoute = part && {
    ...parts.forwarder.plan(part, true, facts),
    commandPid: runOf(shell, retire.run).pid,
    relayers: parts.relayers.keys(part.alive),
  };
  const commandPgid = run.pgid ?? snapshot.alive.find((info) => info.pid === run.pid)?.pgid;
  shell.apply({ kind: 'looked', snapshot: snapshot, commandPgid, route, ...(retireRoute && { retireRoute }) });
}

/** Reaps a batch (its statuses to the machine); true when more wait (another `child` event is queued for them). */
function reap(shell: Shell): boolean {
  const { reaped, more, nodeZombie } = shell.parts.children.reap();
  if (reaped.length > 0) shell.apply({ kind: 'reaped', exits: reaped });
  if (more) shell.queue.push({ kind: 'child' });
  if (nodeZombie) shell.lostChild.soon();
  return more;
}

function treeGone(shell: Shell): boolean {
  return shell.parts.children.treeGone(shell.managers.some((manager) => manager.info.ppid !== process.pid));
}

/** What a forward needs of the supervisor, as it is now. */
function forwardFacts(shell: Shell): ForwardFacts {
  const { run, managers, ownPgid } = shell;
  const { helpers, reaping, nodeChildren } = shell.parts.children;
  return { run, managers, ownPgid, helpers, reaping, nodeChildren, beside: shell.beside?.unreaped() ?? false };
}
