import type { Logger } from '../../output/log.js';
import type { Platform, ProcessInfo, SignalName } from '../../platform/index.js';
import type { Children } from '../children/children.js';
import { describeSent, send, sentAny, sentFields, type Sent } from './deliver.js';
import { describeEnd, formatDuration } from '../machine/format.js';
import { NAMED, type CommandLines } from '../tree/command-lines.js';
import { units } from '../tree/targets.js';
import type { Pm2Supervision } from '../pm2/daemons.js';
import type { Effect } from '../machine/state.js';
import type { CommandRun } from '../children/run.js';
import type { CommandExit, Snapshot } from '../machine/values.js';
import type { RetireCause } from '../machine/runs/run.js';
import { membersOf, processKey, type Target } from '../machine/ledger/ledger.js';

/** What a stop round sent: the signals (for /metrics), and the groups the stop signal went to as groups. */
export interface RoundSent {
  readonly signals: SignalName[];
  readonly groups: Sent['groups'];
}

/**
 * The acts of a stop the machine decided on: the stop signal to the roots it names (pm2 daemons through `pm2 kill`),
 * SIGKILL rounds, and the summary line. Who has had the stop signal is the machine's ledger; the count is here.
 */
export class StopRounds {
  private summary = new StopSummary(0);
  /** Each retiring run's own summary (a reload), by run. */
  private readonly retiring = new Map<number, StopSummary>();
  /** Whether any process had to be SIGKILLed, in any stop of this supervision. */
  killed = false;
  /** A stop of the whole tree is under way (its summary is the last line): a retiring run's kills count in it too. */
  private stopping = false;

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
    private readonly children: Children,
    private readonly pm2: Pm2Supervision | undefined,
    private readonly lines: CommandLines,
    /** Told before each SIGKILL (its deaths are gsup's own, not the OOM killer's: deaths.ts). */
    private readonly killing: () => void = () => {},
  ) {}

  /** A stop of the whole tree begins: what a run retiring now has had to SIGKILL already is named in its summary. */
  begin(now: number): void {
    this.summary = new StopSummary(now);
    this.stopping = true;
    for (const retiring of this.retiring.values()) this.summary.killedIn(retiring);
  }

  /** The summary a round counts in: a retiring run's own, or the stop's. */
  private summaryOf(run: number | undefined): StopSummary {
    return (run !== undefined && this.retiring.get(run)) || this.summary;
  }

  /** Where a SIGKILL counts: a retiring run's summary, and the stop's while one is under way (the last printed). */
  private summariesOf(run: number | undefined): StopSummary[] {
    const own = this.summaryOf(run);
    return this.stopping && own !== this.summary ? [own, this.summary] : [own];
  }

  /** A run's retiring begins: its own summary counts from now on. */
  beginRetire(run: number, now: number): void {
    this.retiring.set(run, new StopSummary(now));
  }

  /**
   * 5. A retired run's one summary line: how long it took, its command's status (its own, never gsup's), who
   * exited by themselves, who was killed. What an old run that exited first left is said only when there was any.
   */
  endRetire(run: number, exit: CommandExit | undefined, cause: RetireCause, now: number): void {
    const summary = this.retiring.get(run);
    this.retiring.delete(run);
    if (!summary || (cause === 'exited' && !summary.any)) return;
    if (summary.anyKilled) this.killed = true;
    const { durationMs, counts, fields } = summary.parts(now);
    const status = exit
      ? `its command ${describeEnd(exit)}`
      : `its command ${summary.anyKilled ? 'outlived SIGKILL' : 'not reported when gsup ended'}`;
    const what = {
      reloaded: `run ${run} retired`,
      failed: `run ${run} (the failed reload) stopped`,
      exited: `what run ${run} left stopped`,
      cut: `run ${run} stopped`,
    }[cause];
    const said = { ...fields, run, cause, code: exit?.code, signal: exit?.signal, signo: exit?.signo };
    this.logger.notice('reload-retired', `${what} in ${formatDuration(durationMs)} (${status}): ${counts}`, said);
  }

  /** A look during the stop delay: who is there, for the summary. */
  saw(snapshot: Snapshot): void {
    this.summary.saw(snapshot, this.children);
  }

  /**
   * One round, as the machine decided it: the stop signal to the roots not reached yet, the signal received again
   * to everyone reached, then SIGCONT to the stopped that had it; pm2's stop of the God daemons, then SIGCONT to
   * what it stops. Returns the signals sent, and the groups the stop signal went to as groups (with their moments
   * and the members found outside).
   */
  round(round: Extract<Effect, { kind: 'stop-round' }>, run: CommandRun): RoundSent {
    const { snapshot: look, route, signal, targets, pm2Kill, again, cont, pm2Cont, held } = round;
    const signals: SignalName[] = [];
    const sent = targets.length > 0 ? this.send(targets, signal, run, true) : undefined;
    if (targets.length > 0 || pm2Kill.length > 0) signals.push(signal);
    // The stop signal received again: once to everyone the stop signal reached (pm2's apps are pm2's to stop).
    const sentAgain = again && this.send(again.targets, again.signal, run, false);
    if (again) signals.push(again.signal);
    // Stopped, they could not act on it (a fatal signal ends a stopped process; a handled one waits for SIGCONT).
    const continued = this.continueStopped(cont);
    const stops = pm2Kill.map(async (manager) => ({
      manager,
      killed: (await this.pm2?.stop(manager, signal, this.children)) ?? false,
    }));
    // After the sends (forward first, log after): what was sent, as sent; the summary's count; what pm2 was told.
    if (sent || held.length > 0) this.said(signal, sent, held, route.relayers, look);
    if (sentAgain) this.said(again.signal, sentAgain, [], route.relayers, look);
    this.saidContinued(continued);
    this.summaryOf(round.run).saw(look, this.children);
    const groups = sent?.groups ?? [];
    if (targets.length === 0 && pm2Kill.length === 0) return { signals, groups };
    const told = new Set(targets.flatMap(membersOf).map((info) => info.pid));
    this.pm2?.announce(route, signal, { sent: (manager) => told.has(manager.info.pid) });
    if (stops.length > 0)
      // pm2's stop carried out (`pm2 kill`, or the signal to the daemon alone): what it stops is continued now, and
      // each God daemon said as it was stopped.
      void Promise.all(stops).then((done) => {
        this.saidContinued(this.continueStopped(pm2Cont));
        const killed = new Map(done.map(({ manager, killed }) => [manager, killed]));
        this.pm2?.announce(route, signal, { sent: (manager) => killed.has(manager), killed: (m) => killed.get(m)! });
      });
    return { signals, groups };
  }

  /** SIGCONT to each, through its identity: those it reached. */
  private continueStopped(stopped: readonly ProcessInfo[]): ProcessInfo[] {
    return stopped.filter((info) => this.platform.signalProcesses([info], 'SIGCONT') > 0);
  }

  private saidContinued(continued: readonly ProcessInfo[]): void {
    const pids = continued.map((info) => info.pid);
    if (pids.length > 0)
      this.logger.info('continue', `SIGCONT → ${pids.map((pid) => `pid ${pid}`).join(', ')} (stopped)`, { pids });
  }

  private send(targets: Target[], signal: SignalName, run: CommandRun, moments: boolean): Sent {
    run.sent.add(signal);
    return send(this.platform, targets, signal, moments);
  }

  /** One line for what a delivery sent, as sent; relayers named as such, and those left out. */
  private said(
    signal: SignalName,
    sent: Sent | undefined,
    held: readonly ProcessInfo[],
    relayers: ReadonlySet<string>,
    look: Snapshot,
  ): void {
    if (!this.logger.enabled('info')) return;
    const childLeft = (info: ProcessInfo) => look.alive.some((child) => child.ppid === info.pid);
    const note = (info: ProcessInfo) =>
      relayers.has(processKey(info)) ? (childLeft(info) ? ' (relayer)' : ' (relayer, its child gone)') : '';
    const parts =
      sent && sentAny(sent) ? [`${signal} → ${describeSent(sent, note)}`] : [`${signal}: nothing sent (gone)`];
    if (held.length > 0) {
      const pids = held.map((info) => `pid ${info.pid}`).join(', ');
      parts.push(`relayer ${pids} left out (its child gets it)`);
    }
    this.logger.info('forward', parts.join('; '), {
      signal,
      targets: sent ? sentFields(sent) : [],
      ...(held.length > 0 && { leftOut: held.map((info) => info.pid) }),
    });
  }

  /** The command's group at once, before any look, through its pidfd (CommandRun); `retiring`: that run's. */
  killCommandGroup(run: CommandRun, snapshot: Snapshot | undefined, retiring?: number): void {
    if (run.pgid === undefined || !run.unreaped()) return;
    const group = snapshot?.alive.filter((info) => info.pgid === run.pgid) ?? [];
    this.killing();
    for (const summary of this.summariesOf(retiring)) summary.killing(group, (info) => this.lines.describe(info));
    run.signalGroup('SIGKILL');
  }

  /**
   * SIGKILL for everything of this look (a retiring run's part of it): whole groups with one kill each (new forks
   * included), the rest one by one. A stop's round reaches a retiring run's part too: named in its line as well.
   */
  killRound(snapshot: Snapshot, ownPgid: number, retiring?: number): void {
    this.killing();
    const describe = (info: ProcessInfo) => this.lines.describe(info);
    for (const summary of this.summariesOf(retiring)) summary.killing(snapshot.alive, describe);
    const runs = retiring === undefined ? snapshot.runs : undefined;
    const partOf = (run: number) => snapshot.alive.filter((info) => runs?.get(info.pid) === run);
    if (runs) this.retiring.forEach((own, run) => own.killing(partOf(run), describe));
    if (!this.platform.canSignal && this.platform.killTree) {
      for (const info of snapshot.alive) void this.platform.killTree(info.pid);
      return;
    }
    send(this.platform, units(snapshot, ownPgid), 'SIGKILL');
  }

  /** Alive after SIGKILL for too long (uninterruptible sleep): named, not counted as killed. */
  giveUp(alive: ProcessInfo[], retiring?: number): void {
    const pids = alive.map((info) => info.pid);
    this.logger.warn('kill-failed', `still alive after SIGKILL: ${pids.join(', ')}`, { pids });
    for (const summary of this.summariesOf(retiring)) summary.survived(alive);
  }

  /** 5. The one summary line; returns how long the stop took, in ms. */
  end(now: number): number {
    this.stopping = false;
    if (this.summary.anyKilled) this.killed = true;
    const { durationMs, counts, fields } = this.summary.parts(now);
    this.logger.notice('stopped', `stopped in ${formatDuration(durationMs)}: ${counts}`, fields);
    return durationMs;
  }
}

/**
 * What one stop sequence saw of the processes, for its summary line: who was seen alive, who had to be SIGKILLed,
 * who outlived SIGKILL. (Who has had the stop signal — none gets it twice — is the machine's ledger: ledger.ts.)
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

  /** What another summary (a retiring run's) had to SIGKILL, or gave up on: in this one too. */
  killedIn(other: StopSummary): void {
    other.killed.forEach((info, key) => (this.seen.add(key), this.killed.set(key, info)));
    other.survivors.forEach((info, key) => (this.seen.add(key), this.survivors.set(key, info)));
    other.names.forEach((name, key) => this.names.set(key, name));
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

  /** Anyone seen at all. */
  get any(): boolean {
    return this.seen.size > 0;
  }

  /** The summary line's parts: how long, how many exited by themselves, which were killed (oldest first, ten named). */
  parts(now: number): { durationMs: number; counts: string; fields: Record<string, unknown> } {
    const durationMs = now - this.startedAt;
    const killed = this.oldestKilled().map((info) => ({ pid: info.pid, command: this.names.get(processKey(info)) }));
    const exited = [...this.seen].filter((key) => !this.killed.has(key) && !this.survivors.has(key)).length;
    const shown = killed.slice(0, NAMED).map(({ pid, command }) => (command ? `${pid} (${command})` : `${pid}`));
    if (killed.length > shown.length) shown.push(`and ${killed.length - shown.length} more`);
    const survived = [...this.survivors.values()].map((info) => info.pid);
    return {
      durationMs,
      counts:
        `${exited} exited by themselves, ${killed.length} killed` +
        (killed.length > 0 ? `: ${shown.join(', ')}` : '') +
        (survived.length > 0 ? `; ${survived.length} still alive after SIGKILL: ${survived.join(', ')}` : ''),
      fields: { durationMs, exited, killed, ...(survived.length > 0 && { survived }) },
    };
  }
}
