import type { Logger } from '../../log.js';
import type { Platform, ProcessInfo, SignalName } from '../../platform/index.js';
import type { Children } from '../children/children.js';
import type { CommandLines } from '../tree/command-lines.js';
import { deliver, send } from './deliver.js';
import { describeTarget } from '../machine/format.js';
import type { ForwardFacts, Forwarder } from './forwarder.js';
import { describeTargets, membersOf, units, type Target } from '../tree/targets.js';
import type { Pm2Manager, Pm2Supervision } from '../pm2/daemons.js';
import type { Relayers } from './relayers.js';
import type { CommandRun } from '../children/run.js';
import { StopRecord } from './stop.js';
import type { TreeSnapshot } from '../tree/tree.js';

/**
 * The acts of a stop the machine decided on: the stop signal to every root
 * not reached yet (pm2 daemons through `pm2 kill`), SIGKILL rounds, and the
 * summary line. It keeps the stop's record of who got what.
 */
export class StopRounds {
  private record = new StopRecord(0);
  /** Whether any process had to be SIGKILLed, in any stop of this supervision. */
  killed = false;

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
    private readonly forwarder: Forwarder,
    private readonly relayers: Relayers,
    private readonly children: Children,
    private readonly pm2: Pm2Supervision | undefined,
    private readonly lines: CommandLines,
    /** Told before each SIGKILL (its deaths are gsup's own, not the OOM killer's: deaths.ts). */
    private readonly killing: () => void = () => {},
  ) {}

  begin(now: number): void {
    this.record = new StopRecord(now);
  }

  /** A look during the stop delay: who is there, for the summary. */
  saw(snapshot: TreeSnapshot): void {
    this.record.saw(snapshot);
  }

  /** The stop signal to every root not reached yet, `again` (a second stop signal) to everyone reached; returns the signals sent. */
  round(
    snapshot: TreeSnapshot,
    signal: SignalName,
    again: SignalName | undefined,
    run: CommandRun,
    facts: ForwardFacts,
  ): SignalName[] {
    const sentSignals: SignalName[] = [];
    const stop = this.record;
    stop.saw(snapshot);
    const route = this.forwarder.plan(snapshot, signal, true, facts);
    const fresh = stop.take(route.targets, snapshot);
    const pm2Kill = this.pm2KillHeld(route.pm2Kill, run) ? [] : stop.takePm2(route.pm2Kill, route.managed, snapshot);
    const sent = new Set([
      ...pm2Kill.map((manager) => manager.info.pid),
      ...fresh.flatMap(membersOf).map((info) => info.pid),
    ]);
    if (fresh.length > 0 || pm2Kill.length > 0) sentSignals.push(signal);
    if (fresh.length > 0) this.deliver(fresh, signal, run);
    if (again) {
      // The stop signal received again: once to everyone the stop signal reached (pm2's apps are pm2's to stop).
      const reached = stop.reachedOf(route.targets);
      if (reached.length > 0) (this.deliver(reached, again, run), sentSignals.push(again));
    }
    for (const manager of pm2Kill) void this.pm2?.stop(manager, signal, this.children);
    // Said after the sends (forward first, log after): it reads command lines.
    if (sent.size > 0) this.pm2?.announce(route, signal, { sent: (manager) => sent.has(manager.info.pid) });
    return sentSignals;
  }

  /**
   * A command that lives on after `pm2 start` (a bootstrap script with a
   * trap that runs `pm2 kill`) has the stop signal: it stops pm2 its own way.
   * gsup's own `pm2 kill` waits until the command is gone, for a daemon the
   * script left; never a second one racing the script's.
   */
  private pm2KillHeld(managers: Pm2Manager[], run: CommandRun): boolean {
    return (
      managers.length > 0 &&
      !run.exit &&
      run.pid !== undefined &&
      !managers.some((manager) => manager.info.pid === run.pid)
    );
  }

  private deliver(targets: Target[], signal: SignalName, run: CommandRun): void {
    run.sent.add(signal);
    deliver(this.platform, targets, signal, this.relayers);
    this.logger.info('forward', `${signal} → ${describeTargets(targets)}`, {
      signal,
      targets: targets.map(describeTarget),
    });
  }

  /** The command's group at once, before any look: through the command's pidfd, taken at its spawn (see CommandRun). */
  killCommandGroup(run: CommandRun, snapshot: TreeSnapshot | undefined): void {
    if (run.pgid === undefined || !run.unreaped()) return;
    const group = snapshot?.alive.filter((info) => info.pgid === run.pgid) ?? [];
    this.killing();
    this.record.killing(group, (info) => this.lines.describe(info));
    run.signalGroup('SIGKILL');
  }

  /** SIGKILL for everything of this look: whole groups with one kill each (new forks included), the rest one by one. */
  killRound(snapshot: TreeSnapshot, ownPgid: number): void {
    this.killing();
    this.record.killing(snapshot.alive, (info) => this.lines.describe(info));
    if (!this.platform.canSignal && this.platform.killTree) {
      for (const info of snapshot.alive) void this.platform.killTree(info.pid);
      return;
    }
    send(this.platform, units(snapshot, ownPgid), 'SIGKILL');
  }

  /** Alive after SIGKILL for too long (uninterruptible sleep): named, not counted as killed. */
  giveUp(alive: ProcessInfo[]): void {
    const pids = alive.map((info) => info.pid);
    this.logger.warn('kill-failed', `still alive after SIGKILL: ${pids.join(', ')}`, { pids });
    this.record.survived(alive);
  }

  /** 5. The one summary line; returns how long the stop took, in ms. */
  end(now: number): number {
    if (this.record.anyKilled) this.killed = true;
    const { message, fields } = this.record.summary(now);
    this.logger.notice('stopped', message, fields);
    return now - this.record.startedAt;
  }
}
