import type { GroupLeaver, Platform, ProcessInfo, SendMoment, SignalName } from '../../platform/index.js';
import type { Target } from '../machine/ledger/ledger.js';

/**
 * What one delivery sent, as sent: the groups that got the signal as groups
 * (with the moment read around each, when asked for, and the members planned
 * for it found outside it right after), and the processes that got it one by
 * one (a process found gone is not among them).
 */
export interface Sent {
  readonly groups: Array<{ pgid: number; moment: SendMoment | undefined; left?: GroupLeaver[] }>;
  readonly processes: ProcessInfo[];
}

/**
 * One signal to planned targets, each through its identity (never a bare
 * number a look saw): a group with one signal through its leader, checked
 * alive, the same and still leading it (the kernel signals through a pidfd
 * the group whose id is that process's pid: no other member can stand for
 * it); a process, or a group whose leader is gone or cannot, one by one.
 * `moments`: read the moment of each group send (a stop round's: its ledger
 * keeps who was in the group then): the clock right before, the last pid
 * handed out right after; then which members planned for it are outside the
 * group (they left it: before the send or after, the ledger decides).
 */
export function send(platform: Platform, targets: readonly Target[], signal: SignalName, moments = false): Sent {
  const sent: Sent = { groups: [], processes: [] };
  const single: ProcessInfo[] = [];
  for (const target of targets) {
    if (target.kind === 'process') {
      single.push(target.process);
      continue;
    }
    const leader = target.members.find((info) => info.pid === target.pgid);
    // The clock before the send, the pid counter after it: see existedAt (machine/ledger/continuity.ts).
    const before = leader && moments ? platform.sendMoment?.() : undefined;
    if (leader && platform.signalGroup(leader, signal)) {
      const after = before && platform.sendMoment?.();
      const moment = before && after && { ...before, lastPid: after.lastPid };
      const left = moments ? platform.leftGroup?.(target.members, target.pgid, signal) : undefined;
      sent.groups.push({ pgid: target.pgid, moment, ...(left && { left }) });
    } else single.push(...target.members);
  }
  for (const info of single) if (platform.signalProcesses([info], signal) > 0) sent.processes.push(info);
  return sent;
}

/** Whether a delivery sent anything at all. */
export function sentAny(sent: Sent): boolean {
  return sent.groups.length > 0 || sent.processes.length > 0;
}

/**
 * A delivery as the log says it: `group 500, pid 612`; `note` adds to a process (a relayer). A group's count is
 * not said: the kernel reaches who is in it at the send, which no look knows.
 */
export function describeSent(sent: Sent, note: (info: ProcessInfo) => string = () => ''): string {
  return [
    ...sent.groups.map((group) => `group ${group.pgid}`),
    ...sent.processes.map((info) => `pid ${info.pid}${note(info)}`),
  ].join(', ');
}

/** The same, as the fields of a JSON log line. */
export function sentFields(sent: Sent): Array<{ pgid: number } | { pid: number }> {
  return [...sent.groups.map(({ pgid }) => ({ pgid })), ...sent.processes.map(({ pid }) => ({ pid }))];
}
