import type { Logger } from '../../log.js';
import type { Platform, ProcessInfo, SignalName } from '../../platform/index.js';
import type { Children } from '../children/children.js';
import { deliver, send } from './deliver.js';
import { describeTarget, formatDuration } from '../machine/format.js';
import { processKey } from '../machine/ledger.js';
import { NAMED, type CommandLines } from '../tree/command-lines.js';
import { describeTargets, units } from '../tree/targets.js';
import type { Pm2Supervision } from '../pm2/daemons.js';
import type { Effect } from '../machine/state.js';
import type { Relayers } from './relayers.js';
import type { CommandRun } from '../children/run.js';
import type { Snapshot } from '../machine/values.js';
import { membersOf, type Target } from '../machine/ledger.js';

/**
 * The acts of a stop the machine decided on: the stop signal to the roots it
 * names (pm2 daemons through `pm2 kill`), SIGKILL rounds, and the summary
 * line. Who has had the stop signal is the machine's ledger; the summary's
 * count is kept here.
 */
export class StopRounds {
  private summary = new StopSummary(0);
  /** Whether any process had to be SIGKILLed, in any stop of this supervision. */
  killed = false;

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
    private readonly relayers: Relayers,
    private readonly children: Children,
    private readonly pm2: Pm2Supervision | undefined,
    private readonly lines: CommandLines,
    /** Told before each SIGKILL (its deaths are gsup's own, not the OOM killer's: deaths.ts). */
    private readonly killing: () => void = () => {},
  ) {}

  begin(now: number): void {
    this.summary = new StopSummary(now);
  }

  /** A look during the stop delay: who is there, for the summary. */
  saw(snapshot: Snapshot): void {
    this.summary.saw(snapshot, this.children);
  }

  /**
   * One round, as the machine decided it: the stop signal to the roots not
   * reached yet, the signal received again to everyone reached, `pm2 kill`
   * to the God daemons; returns the signals sent.
   */
  round(round: Extract<Effect, { kind: 'stop-round' }>, run: CommandRun): SignalName[] {
    const { snapshot: look, route, signal, targets, pm2Kill, again } = round;
    const sentSignals: SignalName[] = [];
    if (targets.length > 0) this.deliver(targets, signal, run);
    if (targets.length > 0 || pm2Kill.length > 0) sentSignals.push(signal);
    // The stop signal received again: once to everyone the stop signal reached (pm2's apps are pm2's to stop).
    if (again) (this.deliver(again.targets, again.signal, run), sentSignals.push(again.signal));
    for (const manager of pm2Kill) void this.pm2?.stop(manager, signal, this.children);
    // After the sends (forward first, log after): the summary's count, and what pm2 was told (it reads command lines).
    this.summary.saw(look, this.children);
    if (targets.length === 0 && pm2Kill.length === 0) return sentSignals;
    const sent = new Set([
      ...pm2Kill.map((manager) => manager.info.pid),
      ...targets.flatMap(membersOf).map((info) => info.pid),
    ]);
    this.pm2?.announce(route, signal, { sent: (manager) => sent.has(manager.info.pid) });
    return sentSignals;
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
  killCommandGroup(run: CommandRun, snapshot: Snapshot | undefined): void {
    if (run.pgid === undefined || !run.unreaped()) return;
    const group = snapshot?.alive.filter((info) => info.pgid === run.pgid) ?? [];
    this.killing();
    this.summary.killing(group, (info) => this.lines.describe(info));
    run.signalGroup('SIGKILL');
  }

  /** SIGKILL for everything of this look: whole groups with one kill each (new forks included), the rest one by one. */
  killRound(snapshot: Snapshot, ownPgid: number): void {
    this.killing();
    this.summary.killing(snapshot.alive, (info) => this.lines.describe(info));
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
    this.summary.survived(alive);
  }

  /** 5. The one summary line; returns how long the stop took, in ms. */
  end(now: number): number {
    if (this.summary.anyKilled) this.killed = true;
    const { message, fields } = this.summary.line(now);
    this.logger.notice('stopped', message, fields);
    return now - this.summary.startedAt;
  }
}

/**
 * What one stop sequence saw of the processes, for its summary line: who was
 * seen alive, who had to be SIGKILLed, who outlived SIGKILL. (Who has had the
 * stop signal — none gets it twice — is the machine's ledger: machine/ledger.ts.)
 */
class StopSummary {
  private readonly seen = new Set<string>();
  private readonly killed = new Map<string, ProcessInfo>();
  /** Sent SIGKILL and alive still when gsup gave up (uninterruptible sleep): not counted as killed. */
  private readonly survivors = new Map<string, ProcessInfo>();
  private readonly names = new Map<string, string>();

  constructor(readonly startedAt: number) {}

  /** The tree's processes in this look; gsup's own helpers (`pm2 kill`) are not counted. */
  saw(snapshot: Snapshot, children: Pick<Children, 'wasHelper'>): void {
    for (const info of snapshot.alive) if (!children.wasHelper(info)) this.seen.add(processKey(info));
  }

  /** These are being SIGKILLed: counted, and the oldest named (by the command lines read ahead, kept now). */
  killing(alive: ProcessInfo[], commandLine: (info: ProcessInfo) => string): void {
    for (const info of alive) {
      const key = processKey(info);
      this.seen.add(key);
      this.killed.set(key, info);
    }
    for (const info of this.oldestKilled().slice(0, NAMED)) {
      const key = processKey(info);
      if (!this.names.has(key)) this.names.set(key, commandLine(info));
    }
  }

  /** Alive after SIGKILL when gsup gives up: they are not "killed". */
  survived(alive: ProcessInfo[]): void {
    for (const info of alive) {
      const key = processKey(info);
      this.killed.delete(key);
      this.seen.add(key);
      this.survivors.set(key, info);
    }
  }

  /** Oldest first (the command before what it forked): pids wrap around, start times do not. */
  private oldestKilled(): ProcessInfo[] {
    return [...this.killed.values()].sort((a, b) => a.startTime - b.startTime || a.pid - b.pid);
  }

  get anyKilled(): boolean {
    return this.killed.size > 0 || this.survivors.size > 0;
  }

  /** The one summary line: how long, how many exited by themselves, which were killed (oldest first, ten named). */
  line(now: number): { message: string; fields: Record<string, unknown> } {
    const durationMs = now - this.startedAt;
    const killed = this.oldestKilled().map((info) => ({ pid: info.pid, command: this.names.get(processKey(info)) }));
    const exited = [...this.seen].filter((key) => !this.killed.has(key) && !this.survivors.has(key)).length;
    const shown = killed.slice(0, NAMED).map(({ pid, command }) => (command ? `${pid} (${command})` : `${pid}`));
    if (killed.length > shown.length) shown.push(`and ${killed.length - shown.length} more`);
    const survived = [...this.survivors.values()].map((info) => info.pid);
    return {
      message:
        `stopped in ${formatDuration(durationMs)}: ${exited} exited by themselves, ${killed.length} killed` +
        (killed.length > 0 ? `: ${shown.join(', ')}` : '') +
        (survived.length > 0 ? `; ${survived.length} still alive after SIGKILL: ${survived.join(', ')}` : ''),
      fields: { durationMs, exited, killed, ...(survived.length > 0 && { survived }) },
    };
  }
}
