import { describe, expect, it } from 'vitest';
import { describeSent, send } from '../../../src/engine/delivery/deliver.js';
import type { ProcessInfo, SignalName } from '../../../src/platform/index.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Target } from '../../../src/engine/machine/ledger/ledger.js';

// One signal to planned targets, each through its identity, on a fake platform that records every call.

function platformWithGroup() {
  const platform = new FakePlatform();
  const leader = platform.add({ pid: 500, ppid: 1 });
  const member = platform.add({ pid: 501, ppid: 500, pgid: 500, sid: 500 });
  const calls: string[] = [];
  const signalGroup = platform.signalGroup.bind(platform);
  const signalProcesses = platform.signalProcesses.bind(platform);
  platform.signalGroup = (info: ProcessInfo, signal: SignalName) => {
    calls.push(`group ${info.pid} ${signal}`);
    return signalGroup(info, signal);
  };
  platform.signalProcesses = (processes: readonly ProcessInfo[], signal: SignalName) => {
    calls.push(`processes ${processes.map((info) => info.pid).join(',')} ${signal}`);
    return signalProcesses(processes, signal);
  };
  const group: Target = { kind: 'group', pgid: 500, members: [leader, member] };
  return { platform, leader, member, group, calls };
}

describe('send', () => {
  it('a group: one signal through its leader, none to its members one by one; said as a group', () => {
    const { platform, group, calls } = platformWithGroup();
    const sent = send(platform, [group], 'SIGHUP');
    expect(calls).toEqual(['group 500 SIGHUP']);
    expect(platform.kills).toEqual([{ pid: -500, signal: 'SIGHUP' }]);
    expect(describeSent(sent)).toBe('group 500'); // the kernel's count is not known: none said
    expect(sent.groups[0].moment).toBeUndefined(); // not asked for
  });

  it('a stop round’s group send carries its moment: the clock right before the send, the pid counter right after', () => {
    const { platform, group, member } = platformWithGroup();
    const order: string[] = [];
    let reads = 0;
    platform.sendMoment = () => (
      order.push('moment'),
      reads++,
      { tick: 42 + reads, lastPid: 500 + reads, pidMax: 32768 }
    );
    const signalGroup = platform.signalGroup.bind(platform);
    platform.signalGroup = (leader, signal) => (order.push('send'), signalGroup(leader, signal));
    // Then its planned members read again: one found outside the group (it left it, before the send or after).
    const leaver = { info: member, pgid: 501, signal: undefined };
    platform.leftGroup = (members, pgid, signal) => {
      order.push(`left ${members.map((info) => info.pid).join(',')} ${pgid} ${signal}`);
      return [leaver];
    };
    const sent = send(platform, [group, { kind: 'process', process: member }], 'SIGTERM', true);
    expect(order).toEqual(['moment', 'send', 'moment', 'left 500,501 500 SIGTERM']);
    const moment = { tick: 43, lastPid: 502, pidMax: 32768 };
    expect(sent.groups).toEqual([{ pgid: 500, moment, left: [leaver] }]);
    // A forward (no moments asked for) reads nothing after its sends.
    order.length = 0;
    expect(send(platform, [group], 'SIGHUP').groups).toEqual([{ pgid: 500, moment: undefined }]);
    expect(order).toEqual(['send']);
  });

  it('a group whose leader is not among its members: each member, by its identity', () => {
    const { platform, member, calls } = platformWithGroup();
    send(platform, [{ kind: 'group', pgid: 500, members: [member] }], 'SIGHUP');
    expect(calls).toEqual(['processes 501 SIGHUP']);
    expect(platform.kills).toEqual([{ pid: 501, signal: 'SIGHUP' }]);
  });

  it('a group whose leader is no longer the one seen (its pid reused): the members one by one, the stranger refused', () => {
    const { platform, group, calls } = platformWithGroup();
    platform.processes.delete(500);
    platform.add({ pid: 500, ppid: 1, startTime: 99_999 }); // another process, same pid
    const sent = send(platform, [group], 'SIGTERM', true);
    expect(calls).toEqual(['group 500 SIGTERM', 'processes 500 SIGTERM', 'processes 501 SIGTERM']);
    expect(platform.kills).toEqual([{ pid: 501, signal: 'SIGTERM' }]);
    expect(platform.refused).toEqual([{ pid: 500, signal: 'SIGTERM' }]);
    // Said as sent: the one member it reached, not the group planned (and no group moment for the ledger).
    expect(describeSent(sent)).toBe('pid 501');
    expect(sent.groups).toEqual([]);
  });

  it('processes, and groups that could not be signalled, one by one; nothing at all for no target', () => {
    const { platform, group, calls } = platformWithGroup();
    const other = platform.add({ pid: 600, ppid: 1 });
    const lone = platform.add({ pid: 700, ppid: 1 });
    const gone: Target = { kind: 'group', pgid: 800, members: [{ ...lone, pid: 800, pgid: 800 }] };
    const targets: Target[] = [{ kind: 'process', process: other }, group, gone, { kind: 'process', process: lone }];
    const sent = send(platform, targets, 'SIGUSR1');
    expect(calls).toEqual([
      'group 500 SIGUSR1',
      'group 800 SIGUSR1',
      'processes 600 SIGUSR1',
      'processes 800 SIGUSR1',
      'processes 700 SIGUSR1',
    ]);
    expect(describeSent(sent)).toBe('group 500, pid 600, pid 700'); // 800 was gone: not sent
    calls.length = 0;
    send(platform, [], 'SIGUSR1');
    expect(calls).toEqual([]);
  });
});
