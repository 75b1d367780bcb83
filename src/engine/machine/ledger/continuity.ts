import type { GroupLeaver, ProcessInfo, SendMoment, SignalName } from '../../../platform/types.js';

// Group continuity, proven by what the kernel keeps: a signal sent to a process group reaches every process in it
// at that moment, and each child whose fork was under way (the kernel hands it the group signals its parent got
// meanwhile). A process found in that group later, that started before the send, has had the signal: even one no
// look saw (a shell's job forked between the look and the send, then reparented when the shell exited).

/** pid_max's ceiling on Linux (PID_MAX_LIMIT): pids wrap around below it when pid_max is not known. */
const PID_MAX_LIMIT = 4_194_304;
/** A second in clock ticks (USER_HZ, where the last pid can be read): a pid is told by the counter within it. */
const PID_TICKS = 100;

/**
 * What a round's delivery said of one group it sent as a group: its moment (undefined where it cannot be read),
 * and the members planned for it that were outside it right after the send (see leaverHad).
 */
export interface GroupSent {
  readonly pgid: number;
  readonly moment: SendMoment | undefined;
  readonly left?: readonly GroupLeaver[];
}

/** A group the stop signal went to as a group (through its leader). */
export interface GroupSend {
  readonly pgid: number;
  /** Its leader's start time: a process with the group's id and another start time leads another group. */
  readonly leaderStart: number;
  /** When it went (see SendMoment); undefined while only planned (see sentAsGroups). */
  readonly moment: SendMoment | undefined;
  /**
   * The processes of its session outside it at the round's look (pid → start time): only they could move into
   * it (setpgid joins a group of the same session), so one of them found in it later came after the send.
   */
  readonly outside: ReadonlyMap<number, number>;
}

/** A group send as planned on a look: its leader, and who in its session was outside it then. */
export function plannedSend(pgid: number, members: readonly ProcessInfo[], alive: readonly ProcessInfo[]) {
  const leader = members.find((info) => info.pid === pgid);
  if (!leader) return undefined; // no leader, no send as a group: its members go one by one
  const outside = new Map<number, number>();
  for (const info of alive) if (info.sid === leader.sid && info.pgid !== pgid) outside.set(info.pid, info.startTime);
  const send: GroupSend = { pgid, leaderStart: leader.startTime, moment: undefined, outside };
  return send;
}

/**
 * Was `pid` handed out no later than `last`? Pids grow up to pid_max, then
 * start again from the bottom: of two pids handed out within one clock tick,
 * the earlier is at most half the range behind the later.
 */
export function handedOutBy(pid: number, last: number, pidMax = PID_MAX_LIMIT): boolean {
  const behind = (((last - pid) % pidMax) + pidMax) % pidMax;
  return behind < pidMax / 2;
}

/**
 * Did this process exist at the send (or was its fork under way)? Started in
 * a tick before the send: yes. Its pid handed out by the pid counter read
 * right after the send: yes, even with a later start time (a fork preempted
 * between taking its pid and its start time), but not over a second later
 * (pids may have gone round since). Both are safe when gsup itself is
 * preempted around the send: what was forked meanwhile is counted as having
 * the signal. Left open: a child forked between the send and that read by a
 * member that survived the signal (a trap) counts as having it, which
 * matters only if that member then leaves it behind; a fork under way at the
 * send that takes its pid after the read (its copying before that is the
 * window; a member the signal kills has its fork cancelled) gets the signal
 * twice. Without a pid counter: the tick alone.
 */
export function existedAt(info: ProcessInfo, moment: SendMoment): boolean {
  if (info.startTime < moment.tick) return true;
  if (moment.lastPid === undefined || info.startTime - moment.tick > PID_TICKS) return false;
  return handedOutBy(info.pid, moment.lastPid, moment.pidMax);
}

/** Did it come into the group from its session after the look: seen outside it, or born since to a parent that was? */
function movedIn(send: GroupSend, info: ProcessInfo, byPid: ReadonlyMap<number, ProcessInfo>): boolean {
  if (send.outside.get(info.pid) === info.startTime) return true;
  const parentStart = send.outside.get(info.ppid);
  return parentStart !== undefined && byPid.get(info.ppid)?.startTime === parentStart;
}

/**
 * Has this process had the stop signal through a group send: in a group that
 * was sent it (the same group: its leader, if alive, is the one signalled),
 * there at that moment, and not moved in since?
 */
export function hadIt(
  sends: readonly GroupSend[],
  info: ProcessInfo,
  byPid: ReadonlyMap<number, ProcessInfo>,
): boolean {
  return sends.some((send) => {
    if (send.pgid !== info.pgid || send.moment === undefined) return false;
    const leader = byPid.get(send.pgid);
    if (leader !== undefined && leader.startTime !== send.leaderStart) return false;
    return existedAt(info, send.moment) && !movedIn(send, info, byPid);
  });
}

/**
 * What delivery did with the planned group sends: those that went as groups
 * get their moment; the others went member by member (their leader was gone
 * or could not be checked), so nobody had the signal through them.
 */
export function sentAsGroups(sends: readonly GroupSend[], groups: readonly GroupSent[]): GroupSend[] {
  const moments = new Map(groups.map((group) => [group.pgid, group.moment]));
  return sends.flatMap((send): GroupSend[] => {
    if (send.moment !== undefined) return [send];
    const moment = moments.get(send.pgid);
    return moment === undefined ? [] : [{ ...send, moment }];
  });
}

// Signals whose default action ends the process (terminate, or core): the stop signals among them.
const ENDS_BY_DEFAULT: ReadonlySet<SignalName> = new Set<SignalName>([
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGTERM',
  'SIGUSR1',
  'SIGUSR2',
  'SIGALRM',
  'SIGPIPE',
]);

/**
 * Had this member the signal, found outside its group right after the group send (it left with setsid or
 * setpgid, before the send or after it)? What the kernel shows of the signal in it then decides: pending — it had
 * it (`had`); ignored — nothing to send (`ignored`); no handler, not blocked, alive — had it come, its default
 * action would have ended it: it left before the send (`missed`, not reached: a root gets it at a later round);
 * otherwise (a handler that may have run, or a mask, or nothing read) it cannot be told (`unsure`), and counts as
 * reached: once at most rather than twice.
 */
export function leaverHad(leaver: GroupLeaver, signal: SignalName): 'had' | 'ignored' | 'missed' | 'unsure' {
  const state = leaver.signal;
  if (!state) return 'unsure';
  if (state.pending) return 'had';
  if (state.ignored) return 'ignored';
  if (!state.caught && !state.blocked && ENDS_BY_DEFAULT.has(signal)) return 'missed';
  return 'unsure';
}
