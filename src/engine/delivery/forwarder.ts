import { monotonicMs } from '../../platform/clock.js';
import type { Logger } from '../../output/log.js';
import type { Platform, SignalName } from '../../platform/index.js';
import { describeSent, send, sentAny, sentFields } from './deliver.js';
import { describeSignal } from '../machine/format.js';
import { roots, type TargetMode } from '../tree/targets.js';
import type { Pm2Supervision } from '../pm2/daemons.js';
import type { Looks } from '../tree/looks.js';
import type { ProcessTree } from '../tree/tree.js';
import type { Pm2Manager, Pm2Route, Snapshot } from '../machine/values.js';
import { restrictTargets, type Target } from '../machine/ledger/ledger.js';

// A snapshot this young is fresh enough to route a forwarded signal beyond the command's group.
const FRESH_MS = 50;

/** What the supervisor knows that a forward needs, as it is at the call (a value, built by the shell). */
export interface ForwardFacts {
  /** The command's group while it leads one and is unreaped; whether it is a pm2 manager (once its line is read). */
  readonly run: {
    readonly pid: number | undefined;
    readonly pgid: number | undefined;
    readonly sent: Set<SignalName>;
    manager?: boolean;
    unreaped(): boolean;
    signalGroup(signal: SignalName): boolean;
  };
  readonly managers: Pm2Manager[];
  readonly ownPgid: number;
  /** gsup's own helpers (`pm2 kill`): never a target. */
  readonly helpers: ReadonlySet<number>;
  /** Orphans of the tree come to gsup (PID 1, subreaper). */
  readonly reaping: boolean;
  readonly nodeChildren: ReadonlySet<number>;
  /** A run beside the current one (a reload): its command's group is another root, Node's child though it is. */
  readonly beside: boolean;
}

/** Job control (gsup stops itself after), and the signal a rule rewrote into this one (for the log). */
export type ForwardHow = { suspend?: boolean; received?: SignalName };

/**
 * Forwarded signals (all but the stop signals): a plan, then one delivery.
 * The command's group gets the signal at once, through the pidfd taken at
 * its spawn, with no look at the tree; the other roots get it once the tree
 * is known fresh. The same signal waiting for the tree twice is delivered
 * once.
 */
export class Forwarder {
  /**
   * Signals waiting for a look, in order: the group each went to at once (if any), and the signal received
   * for it. An array: a Map that empties makes V8 a new table each time (in the old generation, once the Map
   * is there), one for every forward.
   */
  private readonly pending: Array<{ signal: SignalName; group: number | undefined; received: SignalName | undefined }> =
    [];
  /** Signals after whose delivery gsup stops itself (Ctrl+Z and its kin, rewritten or not). */
  private readonly suspendAfter = new Set<SignalName>();
  private readonly rootsVerdict = { at: -Infinity, group: 0, possible: true };

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
    private readonly mode: TargetMode,
    private readonly pm2: Pm2Supervision | undefined,
    private readonly looks: Looks,
    private readonly tree: ProcessTree,
    private readonly suspendSelf?: () => void,
  ) {}

  /**
   * `suspend`: job control; once the signal is out (or none, if a rule
   * dropped it), gsup stops itself too, so the shell sees the job stopped.
   * `received`: the signal a rule rewrote into this one, for the log.
   * Returns the group signalled at once (the rest follows a look), if any.
   */
  forward(signal: SignalName | null, facts: ForwardFacts, how: ForwardHow = {}): number | undefined {
    const { suspend = false, received } = how;
    if (signal === null) {
      if (suspend) this.suspendSelf?.();
      return undefined;
    }
    if (suspend) this.suspendAfter.add(signal);
    facts.run.sent.add(signal);
    let group = this.commandGroup(signal, facts);
    // No such group yet (setsid -c has still to run) or any more: the look at the tree finds its members.
    if (group !== undefined && !facts.run.signalGroup(signal)) group = undefined;
    if (group !== undefined && this.logger.enabled('info')) {
      const said = describeSignal(signal, received);
      this.logger.info('forward', `${said} → group ${group}`, { signal, received, targets: [{ pgid: group }] });
    }
    for (const waiting of this.pending) if (waiting.signal === signal) return group;
    this.pending.push({ signal, group, received });
    if (this.looks.fresh(FRESH_MS) && this.looks.last) this.deliverPending(this.looks.last, facts);
    else if (group === undefined || this.otherRootsPossible(facts, group)) this.looks.take();
    else this.deliverPending(undefined, facts);
    return group;
  }

  /** A fresh look at the tree: what waited for it goes out now. Returns what was sent, signal by signal. */
  deliverPending(
    snapshot: Snapshot | undefined,
    facts: ForwardFacts,
  ): Array<{ signal: SignalName; targets: Target[] }> {
    const sent: Array<{ signal: SignalName; targets: Target[] }> = [];
    // A God title the command took since its spawn (`pm2 … --no-daemon`): it gets signals alone from now on.
    if (facts.managers.some((manager) => manager.info.pid === facts.run.pid)) facts.run.manager = true;
    while (this.pending.length > 0) {
      const { signal, group, received } = this.pending.shift()!;
      const route = snapshot ? this.plan(snapshot, false, facts) : undefined;
      const targets = route?.targets.filter((target) => target.kind !== 'group' || target.pgid !== group) ?? [];
      const said = describeSignal(signal, received);
      if (targets.length > 0) {
        const delivered = send(this.platform, targets, signal);
        sent.push({ signal, targets });
        // As sent: a group whose leader was gone went to its members one by one, and says so.
        const fields = { signal, received, targets: sentFields(delivered) };
        const what = sentAny(delivered) ? describeSent(delivered) : 'no process (gone)';
        this.logger.info('forward', `${said} → ${what}`, fields);
      } else if (group === undefined) {
        this.logger.info('forward', `${said}: no process to forward to`, { signal, received, targets: [] });
      }
      if (route) this.pm2?.announce(route, signal, { received }); // after the send: it reads command lines
      if (this.suspendAfter.delete(signal)) this.suspendSelf?.();
    }
    return sent;
  }

  /**
   * Roots of the tree for this signal, adjusted for pm2 (the manager alone; a
   * stop is `pm2 kill`); never gsup's own helpers.
   */
  plan(snapshot: Snapshot, stop: boolean, facts: ForwardFacts): Pm2Route {
    const { helpers, ownPgid, managers } = facts;
    let targets = roots(snapshot, this.mode, ownPgid);
    if (helpers.size > 0)
      targets = restrictTargets(
        targets,
        new Set(snapshot.alive.map((info) => info.pid).filter((pid) => !helpers.has(pid))),
      );
    if (!this.pm2) return { targets, pm2Kill: [], managed: new Set(), runs: new Map() };
    return this.pm2.route(targets, snapshot, managers, stop);
  }

  /**
   * The command's process group, when it can be signalled with no look at
   * the tree: `group` target, the command unreaped, and known to be no pm2
   * manager (which gets signals alone; until its command line is read, the
   * look decides). Not SIGQUIT: pm2 stops its apps on it, so a pm2 runtime
   * inside the group must get it alone.
   */
  private commandGroup(signal: SignalName, facts: ForwardFacts): number | undefined {
    const { run } = facts;
    const command = this.tree.commandInfo;
    if (run.pgid === undefined || !run.unreaped() || signal === 'SIGQUIT') return undefined;
    // By its command line, read at the spawn (the command as first seen is this run's once the pids match).
    const ours = command !== undefined && command.pid === run.pid;
    run.manager ??= this.pm2 && ours ? this.pm2.isManager(command) : undefined;
    return this.pm2 && run.manager !== false ? undefined : run.pgid;
  }

  /**
   * Can any root besides the command's group (signalled) exist? As PID 1 or
   * subreaper, every orphan of the tree is a child of gsup; with none alive
   * but Node's own and those in that group, and no pm2 daemon adopted, no: a
   * group whose parent lives is its parent's.
   */
  private otherRootsPossible(facts: ForwardFacts, group: number): boolean {
    if (facts.beside) return true;
    // Asked once per forward: under a flood, one answer serves for a moment.
    const now = monotonicMs();
    const verdict = this.rootsVerdict;
    if (now - verdict.at <= FRESH_MS && verdict.group === group) return verdict.possible;
    const { reaping, managers, nodeChildren } = facts;
    // Where the platform cannot tell without a look (no /proc/PID/task/TID/children): a look.
    verdict.possible =
      !reaping ||
      managers.length > 0 ||
      !!this.pm2?.pidFileExists() ||
      this.platform.childOutside?.(nodeChildren, group) !== false;
    verdict.at = now;
    verdict.group = group;
    return verdict.possible;
  }
}
