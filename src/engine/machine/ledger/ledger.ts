import type { GroupLeaver, ProcessInfo, SignalName } from '../../../platform/types.js';
import { hadIt, leaverHad, plannedSend, sentAsGroups, type GroupSend, type GroupSent } from './continuity.js';

// The stop's ledger: who has had the stop signal, so that none gets it twice. Pure, part of the state (Stop).

/** One kill(2) call: a whole process group, or one process. */
export type Target =
  { kind: 'group'; pgid: number; members: ProcessInfo[] } | { kind: 'process'; process: ProcessInfo };

export function membersOf(target: Target): ProcessInfo[] {
  return target.kind === 'group' ? target.members : [target.process];
}

/** A process as one identity: a reused pid is another process. */
export function processKey(info: ProcessInfo): string {
  return `${info.pid}:${info.startTime}`;
}

/**
 * The part of `targets` that has not been reached yet: a unit none of whose
 * members was reached stays whole, one partly reached becomes its other
 * members one by one (a process that was signalled in its old group and then
 * left it must not get the same signal twice).
 */
export function unreached(targets: Target[], reached: ReadonlySet<string>): Target[] {
  return targets.flatMap((target): Target[] => {
    const members = membersOf(target);
    const fresh = members.filter((info) => !reached.has(processKey(info)));
    if (fresh.length === members.length) return [target];
    return fresh.map((process): Target => ({ kind: 'process', process }));
  });
}

/** Keeps only the processes in `only`; a group with others in it becomes its wanted members, one by one. */
export function restrictTargets(targets: Target[], only: ReadonlySet<number>): Target[] {
  return targets.flatMap((target): Target[] => {
    if (target.kind === 'process') return only.has(target.process.pid) ? [target] : [];
    if (target.members.every((info) => only.has(info.pid))) return [target];
    return target.members.filter((info) => only.has(info.pid)).map((process): Target => ({ kind: 'process', process }));
  });
}

/** Who has had the stop signal in one stop sequence, by identity (a reused pid is a stranger). A plain value. */
export interface Ledger {
  /** Every process sent the stop signal (processKey), or left to the pm2 daemon stopped through pm2. */
  readonly reached: ReadonlySet<string>;
  /** The groups of those processes: a process forked into one since is its parent's while that lives. */
  readonly groups: ReadonlySet<number>;
  /** The pm2 God daemons stopped through pm2 (`pm2 kill`, or the stop signal alone; by pid): each once. */
  readonly pm2Killed: ReadonlySet<number>;
  /** The groups the stop signal went to as groups, with their moments: who was in one then has had it. */
  readonly sent: readonly GroupSend[];
  /** Relayers left out while a child of theirs has the signal (processKey). */
  readonly held: ReadonlySet<string>;
  /** Stopped processes sent SIGCONT (processKey): once each. */
  readonly continued: ReadonlySet<string>;
}

export const EMPTY_LEDGER: Ledger = {
  reached: new Set(),
  groups: new Set(),
  pm2Killed: new Set(),
  sent: [],
  held: new Set(),
  continued: new Set(),
};

/** A pm2 God daemon, as the ledger knows it: its process. */
export interface Daemon {
  readonly info: ProcessInfo;
}

/**
 * Where a stop round's signal goes, as the shell planned it on the look
 * (forwarder.plan): the roots; the pm2 God daemons to stop through pm2,
 * and every pid they run; the command's pid; and which processes of the look
 * are relayers (by processKey: their command lines, read ahead).
 */
export interface RoundRoute<D extends Daemon> {
  readonly targets: Target[];
  readonly pm2Kill: readonly D[];
  readonly managed: ReadonlySet<number>;
  readonly commandPid: number | undefined;
  readonly relayers: ReadonlySet<string>;
}

/**
 * What one stop round sends: the stop signal to `fresh`, pm2's stop to
 * `pm2Kill`, a stop signal received again to `again`, then SIGCONT to `cont`
 * (stopped, they could not act on it), and to `pm2Cont` once pm2's stop is
 * under way; `held`: relayers left out, said once.
 */
export interface Round<D extends Daemon> {
  readonly ledger: Ledger;
  readonly fresh: Target[];
  readonly pm2Kill: D[];
  readonly again: { signal: SignalName; targets: Target[] } | undefined;
  readonly cont: ProcessInfo[];
  readonly pm2Cont: ProcessInfo[];
  readonly held: ProcessInfo[];
}

/**
 * One stop round on a look: the roots not sent the stop signal yet (now
 * counted as sent), the God daemons not stopped through pm2 yet; and, for a stop
 * signal received again, everyone the stop signal reached (this round's too).
 * `exited`: the command is gone (gsup's own `pm2 kill` waits for it: see pm2KillHeld).
 */
export function stopRound<D extends Daemon>(
  ledger: Ledger,
  route: RoundRoute<D>,
  alive: readonly ProcessInfo[],
  again: SignalName | undefined,
  exited: boolean,
): Round<D> {
  const taken = take(ledger, route, alive);
  const pm2Waits = pm2KillHeld(route, exited);
  const pm2 = pm2Waits ? { ledger: taken.ledger, fresh: [], via: NONE } : takePm2(taken.ledger, route, alive);
  const { fresh: pm2Kill } = pm2;
  const { ledger: after, cont, pm2Cont } = continueStopped(pm2.ledger, alive, pm2.via);
  const reached = again === undefined ? [] : reachedOf(after, route.targets);
  return {
    ledger: after,
    fresh: taken.fresh,
    pm2Kill,
    again: again !== undefined && reached.length > 0 ? { signal: again, targets: reached } : undefined,
    cont,
    pm2Cont,
    held: taken.held,
  };
}

/** Members found outside their group right after its send: those not reached after all, those it cannot tell. */
export type Leavers = { readonly missed: GroupLeaver[]; readonly unsure: GroupLeaver[] };

/**
 * The delivery of a round said which planned groups went as groups, and when (see continuity.ts), and which
 * members planned for each were outside it right after: one that left before the send (leaverHad: `missed`) is not
 * reached after all; one it cannot tell stays reached.
 */
export function roundSent(ledger: Ledger, groups: readonly GroupSent[], signal: SignalName) {
  const leavers: Leavers = { missed: [], unsure: [] };
  for (const group of groups)
    for (const leaver of group.left ?? []) {
      const verdict = leaverHad(leaver, signal);
      if (verdict === 'missed' || verdict === 'unsure') leavers[verdict].push(leaver);
    }
  const sent = sentAsGroups(ledger.sent, groups);
  if (leavers.missed.length === 0) return { ledger: { ...ledger, sent }, leavers };
  const reached = new Set(ledger.reached);
  for (const { info } of leavers.missed) reached.delete(processKey(info));
  return { ledger: { ...ledger, sent, reached }, leavers };
}

/**
 * The part of `targets` not sent the stop signal yet, now counted as sent.
 * Not sent: a process that had it as a member of a group sent it (continuity.ts);
 * a process that joined a reached group since (forked by a member: a cleanup
 * helper, a trap's `pm2 kill`, a child a relayer left out started since),
 * which is its parent's while that lives; a relayer whose child has it
 * (relayersHeld). A group with a relayer in it goes member by member.
 */
function take(
  ledger: Ledger,
  route: RoundRoute<Daemon>,
  alive: readonly ProcessInfo[],
): { ledger: Ledger; fresh: Target[]; held: ProcessInfo[] } {
  const byPid = new Map<number, ProcessInfo>();
  for (const info of alive) byPid.set(info.pid, info);
  const had: ProcessInfo[] = [];
  const split = unreached(route.targets, ledger.reached).flatMap((target): Target[] => {
    const members = membersOf(target);
    const left: ProcessInfo[] = [];
    for (const info of members) {
      if (ledger.sent.length > 0 && hadIt(ledger.sent, info, byPid)) had.push(info);
      else left.push(info);
    }
    // A relayer goes alone: a send to its group would also reach a child it forked since the look (tsx watch
    // restarting its app), which it relays to.
    const whole = left.length === members.length && !members.some((info) => route.relayers.has(processKey(info)));
    return whole ? [target] : left.map((process): Target => ({ kind: 'process', process }));
  });
  // Forked into a reached group since, its parent alive; never a relayer left out (it was there all along).
  const parents = (info: ProcessInfo) =>
    ledger.groups.has(info.pgid) && byPid.has(info.ppid) && !ledger.held.has(processKey(info));
  let fresh = split.filter((target) => target.kind === 'group' || !parents(target.process));
  const held = relayersHeld(ledger, route.relayers, fresh, had, alive);
  if (held.length > 0) {
    const out = new Set(held.map((info) => info.pid));
    const kept = fresh.flatMap(membersOf).filter((info) => !out.has(info.pid));
    fresh = restrictTargets(fresh, new Set(kept.map((info) => info.pid)));
  }
  const newlyHeld = held.filter((info) => !ledger.held.has(processKey(info)));
  if (fresh.length === 0 && had.length === 0 && newlyHeld.length === 0) return { ledger, fresh, held: [] };
  const reached = new Set(ledger.reached);
  const groups = new Set(ledger.groups);
  const sent = [...ledger.sent];
  for (const info of had) reached.add(processKey(info));
  for (const target of fresh) {
    for (const info of membersOf(target)) (reached.add(processKey(info)), groups.add(info.pgid));
    const planned = target.kind === 'group' ? plannedSend(target.pgid, target.members, alive) : undefined;
    if (planned) sent.push(planned);
  }
  const heldKeys = newlyHeld.length === 0 ? ledger.held : new Set([...ledger.held, ...newlyHeld.map(processKey)]);
  return { ledger: { ...ledger, reached, groups, sent, held: heldKeys }, fresh, held: newlyHeld };
}

/**
 * The relayers (tsx) among this round's targets that are left out: a relayer
 * with a child that has the stop signal, gets it now, or is a relayer left
 * out too, would pass it on a second time. Once its children are gone (or
 * none of them gets it from gsup) it gets the signal itself: `tsx watch`
 * stays after its child.
 */
function relayersHeld(
  ledger: Ledger,
  relayers: ReadonlySet<string>,
  fresh: readonly Target[],
  had: readonly ProcessInfo[],
  alive: readonly ProcessInfo[],
): ProcessInfo[] {
  if (relayers.size === 0) return [];
  const members = fresh.flatMap(membersOf);
  const candidates = members.filter((info) => relayers.has(processKey(info)));
  if (candidates.length === 0) return [];
  const now = new Set([...members, ...had].map(processKey));
  const covered = (key: string) => now.has(key) || ledger.reached.has(key) || ledger.held.has(key);
  return candidates.filter((relayer) =>
    alive.some((child) => child.ppid === relayer.pid && covered(processKey(child))),
  );
}

/**
 * Stopped processes (SIGSTOP, job control, a debugger) that have had the stop signal get SIGCONT after it, once
 * each (systemd's way): those gsup sent it, in this round or before (or that had it through their group); what
 * pm2 is told to stop in this round only once it has been told (`pm2Cont`). Others stopped are left as they are.
 */
function continueStopped(ledger: Ledger, alive: readonly ProcessInfo[], viaPm2: ReadonlySet<string>) {
  const cont: ProcessInfo[] = [];
  const pm2Cont: ProcessInfo[] = [];
  for (const info of alive) {
    const key = processKey(info);
    if ((info.state !== 'T' && info.state !== 't') || !ledger.reached.has(key) || ledger.continued.has(key)) continue;
    (viaPm2.has(key) ? pm2Cont : cont).push(info);
  }
  if (cont.length === 0 && pm2Cont.length === 0) return { ledger, cont, pm2Cont };
  const continued = new Set(ledger.continued);
  for (const info of [...cont, ...pm2Cont]) continued.add(processKey(info));
  return { ledger: { ...ledger, continued }, cont, pm2Cont };
}

const NONE: ReadonlySet<string> = new Set();

/** The pm2 God daemons not yet stopped through pm2; what they run counts as reached (`via`: newly so). */
function takePm2<D extends Daemon>(
  ledger: Ledger,
  route: Pick<RoundRoute<D>, 'pm2Kill' | 'managed'>,
  alive: readonly ProcessInfo[],
): { ledger: Ledger; fresh: D[]; via: ReadonlySet<string> } {
  const fresh = route.pm2Kill.filter((manager) => !ledger.pm2Killed.has(manager.info.pid));
  if (fresh.length === 0) return { ledger, fresh, via: NONE };
  const pm2Killed = new Set(ledger.pm2Killed);
  for (const manager of fresh) pm2Killed.add(manager.info.pid);
  const reached = new Set(ledger.reached);
  const via = new Set<string>();
  for (const info of alive) {
    const key = processKey(info);
    if (route.managed.has(info.pid) && !reached.has(key)) (reached.add(key), via.add(key));
  }
  return { ledger: { ...ledger, reached, pm2Killed }, fresh, via };
}

/** The part of `targets` already sent the stop signal (a stop signal received again goes to them). */
function reachedOf(ledger: Ledger, targets: Target[]): Target[] {
  const fresh = new Set(unreached(targets, ledger.reached).flatMap(membersOf).map(processKey));
  const reached = targets
    .flatMap(membersOf)
    .filter((info) => !fresh.has(processKey(info)))
    .map((info) => info.pid);
  return restrictTargets(targets, new Set(reached));
}

/**
 * A command that lives on after `pm2 start` (a bootstrap script with a
 * trap that runs `pm2 kill`) has the stop signal: it stops pm2 its own way.
 * gsup's own stop of the daemon waits until the command is gone, for a
 * daemon the script left; never a second one racing the script's.
 */
function pm2KillHeld(route: RoundRoute<Daemon>, exited: boolean): boolean {
  const { pm2Kill, commandPid } = route;
  return (
    pm2Kill.length > 0 &&
    !exited &&
    commandPid !== undefined &&
    !pm2Kill.some((manager) => manager.info.pid === commandPid)
  );
}
