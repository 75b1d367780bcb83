import type { Platform, ProcessInfo, SendMoment, SignalName } from '../../platform/index.js';
import type { Target } from '../machine/ledger.js';

/**
 * What one delivery sent, as sent: the groups that got the signal as groups
 * (with the moment read right before each, when asked for), and the
 * processes that got it one by one (a process found gone is not among them).
 */
export interface Sent {
  readonly groups: Array<{ pgid: number; members: number; moment: SendMoment | undefined }>;
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
 * handed out right after.
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
    // The clock before the send, the pid counter after it: see existedAt (machine/continuity.ts).
    const before = leader && moments ? platform.sendMoment?.() : undefined;
    if (leader && platform.signalGroup(leader, signal)) {
      const after = before && platform.sendMoment?.();
      const moment = before && after && { ...before, lastPid: after.lastPid };
      sent.groups.push({ pgid: target.pgid, members: target.members.length, moment });
    } else single.push(...target.members);
  }
  for (const info of single) if (platform.signalProcesses([info], signal) > 0) sent.processes.push(info);
  return sent;
}

/** Whether a delivery sent anything at all. */
export function sentAny(sent: Sent): boolean {
  return sent.groups.length > 0 || sent.processes.length > 0;
}

/** A delivery as the log says it: `group 500 (3), pid 612`; `note` adds to a process (a relayer). */
export function describeSent(sent: Sent, note: (info: ProcessInfo) => string = () => ''): string {
  return [
    ...sent.groups.map((group) => `group ${group.pgid} (${group.members})`),
    ...sent.processes.map((info) => `pid ${info.pid}${note(info)}`),
  ].join(', ');
}

/** The same, as the fields of a JSON log line. */
export function sentFields(sent: Sent): Array<{ pgid: number } | { pid: number }> {
  return [...sent.groups.map(({ pgid }) => ({ pgid })), ...sent.processes.map(({ pid }) => ({ pid }))];
}
