import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { leftGroup, signalState } from '../../../../../src/platform/linux/proc/leavers.js';
import { readInfo } from '../../../../../src/platform/linux/proc/stat.js';
import type { ProcessInfo } from '../../../../../src/platform/index.js';
import { waitFor } from '../../../../helpers/proc.js';

// Right after a group send: the members planned for it found outside the group, and the signal in each
// (/proc/PID/status), read from real processes.

describe('a signal in /proc/PID/status', () => {
  const status = [
    'Name:\tperl',
    'SigQ:\t1/63704',
    'SigPnd:\t0000000000000000',
    'ShdPnd:\t0000000000004000', // SIGTERM (15): bit 14
    'SigBlk:\t0000000000004000',
    'SigIgn:\t0000000000000001', // SIGHUP
    'SigCgt:\t0000000180004002', // SIGINT, SIGTERM, and two real-time signals above 31
    '',
  ].join('\n');

  it.each([
    { signal: 15, state: { pending: true, blocked: true, ignored: false, caught: true } },
    { signal: 2, state: { pending: false, blocked: false, ignored: false, caught: true } },
    { signal: 1, state: { pending: false, blocked: false, ignored: true, caught: false } },
    { signal: 10, state: { pending: false, blocked: false, ignored: false, caught: false } },
  ])('signal $signal', ({ signal, state }) => {
    expect(signalState(`x\n${status}`, signal)).toEqual(state);
  });
});

describe('leftGroup, on real processes', () => {
  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const child of started.splice(0)) child.kill('SIGKILL');
  });

  /** A process in a group of its own, once it said `ready`. */
  async function own(command: string, args: string[]): Promise<ProcessInfo> {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(child);
    let out = '';
    child.stdout!.on('data', (chunk) => (out += String(chunk)));
    await waitFor(() => out.includes('ready'), 'the process ready');
    return readInfo(child.pid!)!;
  }

  it('outside the group: the signal pending, ignored, caught, or none of these; in it, gone, or reused: not said', async () => {
    const leader = await own('sh', ['-c', 'echo ready; exec sleep 30']);
    const plain = await own('sh', ['-c', 'echo ready; exec sleep 30']);
    const ignoring = await own('sh', ['-c', "trap '' TERM; echo ready; sleep 30"]);
    const caught = await own('perl', ['-e', '$| = 1; $SIG{TERM} = sub { exit 0 }; print "ready\\n"; sleep 30']);
    const blocking = await own('perl', [
      '-e',
      'use POSIX; sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGTERM)); $| = 1; print "ready\\n"; sleep 30',
    ]);
    process.kill(blocking.pid, 'SIGTERM'); // held pending: blocked
    const status = () => readFileSync(`/proc/${blocking.pid}/status`, 'latin1');
    await waitFor(() => signalState(status(), 15)!.pending, 'SIGTERM pending');
    const gone = { ...plain, pid: 4_194_000 };
    const reused = { ...plain, startTime: plain.startTime + 1 };
    const members = [leader, plain, ignoring, caught, blocking, gone, reused];
    const leavers = leftGroup(members, leader.pgid, 'SIGTERM');
    const state = (pending: boolean, blocked: boolean, ignored: boolean, caught: boolean) => ({
      pending,
      blocked,
      ignored,
      caught,
    });
    expect(leavers).toEqual([
      { info: plain, pgid: plain.pid, signal: state(false, false, false, false) },
      { info: ignoring, pgid: ignoring.pid, signal: state(false, false, true, false) },
      { info: caught, pgid: caught.pid, signal: state(false, false, false, true) },
      { info: blocking, pgid: blocking.pid, signal: state(true, true, false, false) },
    ]);
  });
});
