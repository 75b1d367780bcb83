import { describe, expect, it } from 'vitest';
import { deliver, send } from '../../../src/engine/delivery/deliver.js';
import type { ProcessInfo, SignalName } from '../../../src/platform/index.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Target } from '../../../src/engine/machine/ledger.js';

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
  it('a group: one signal through its leader, none to its members one by one', () => {
    const { platform, group, calls } = platformWithGroup();
    send(platform, [group], 'SIGHUP');
    expect(calls).toEqual(['group 500 SIGHUP']);
    expect(platform.kills).toEqual([{ pid: -500, signal: 'SIGHUP' }]);
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
    send(platform, [group], 'SIGTERM');
    expect(calls).toEqual(['group 500 SIGTERM', 'processes 500,501 SIGTERM']);
    expect(platform.kills).toEqual([{ pid: 501, signal: 'SIGTERM' }]);
    expect(platform.refused).toEqual([{ pid: 500, signal: 'SIGTERM' }]);
  });

  it('processes, and groups that could not be signalled, in one call; nothing at all for no target', () => {
    const { platform, group, calls } = platformWithGroup();
    const other = platform.add({ pid: 600, ppid: 1 });
    const lone = platform.add({ pid: 700, ppid: 1 });
    const gone: Target = { kind: 'group', pgid: 800, members: [{ ...lone, pid: 800, pgid: 800 }] };
    send(platform, [{ kind: 'process', process: other }, group, gone, { kind: 'process', process: lone }], 'SIGUSR1');
    expect(calls).toEqual(['group 500 SIGUSR1', 'group 800 SIGUSR1', 'processes 600,800,700 SIGUSR1']);
    calls.length = 0;
    send(platform, [], 'SIGUSR1');
    expect(calls).toEqual([]);
  });
});

describe('deliver', () => {
  it('without relayers (or none among the targets): the targets as planned', () => {
    const { platform, group, calls } = platformWithGroup();
    deliver(platform, [group], 'SIGTERM');
    expect(calls).toEqual(['group 500 SIGTERM']);
  });
});
