import { describe, expect, it } from 'vitest';
import { Reaper } from '../../../src/engine/children/reaper.js';
import { Logger } from '../../../src/output/log.js';
import type { ReapedChild } from '../../../src/platform/index.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { CommandExit } from '../../../src/engine/machine/values.js';

// The zombies reparented to gsup, reaped from a fake platform's list: in batches, never one of Node's children.

/** `count` zombies that exited 0, from pid `first` on. */
const exitedZero = (count: number, first = 1000): ReapedChild[] =>
  Array.from({ length: count }, (_, index) => ({ pid: first + index, code: 0, signal: null }));

/** A platform that reaps these one by one ('blocked': one of Node's is next); the `keep` of each call is kept. */
function zombies(waiting: Array<ReapedChild | 'blocked'>) {
  const platform = new FakePlatform();
  const keeps: Array<ReadonlySet<number>> = [];
  platform.reapOne = (keep) => {
    keeps.push(keep);
    return waiting.shift() ?? 'none';
  };
  return { platform, waiting, keeps };
}

function reaperOf(platform: FakePlatform, nodeChildren = new Set<number>(), verbosity = 0, apart?: Set<number>) {
  const lines: string[] = [];
  const died: Array<[number, CommandExit]> = [];
  const logger = new Logger({ verbosity, write: (line) => lines.push(line.trim()) });
  const notTheTrees = apart && ((pid: number) => apart.delete(pid));
  const reaper = new Reaper(platform, nodeChildren, logger, (pid, exit) => died.push([pid, exit]), notTheTrees);
  return { reaper, lines, died };
}

describe('Reaper', () => {
  it('reaps a batch of 512 at most; the rest wait for the next event, which is told there are more', () => {
    const { platform, waiting } = zombies(exitedZero(600));
    const { reaper } = reaperOf(platform);
    const first = reaper.reap();
    expect(first.reaped).toHaveLength(512);
    expect(first.more).toBe(true);
    expect(waiting).toHaveLength(88);
    const second = reaper.reap();
    expect(second.reaped).toHaveLength(88);
    expect(second).toMatchObject({ more: false, nodeZombie: false });
  });

  it('never a child Node spawned: each reap keeps the set it was given, as it is at that moment', () => {
    const { platform, keeps } = zombies(exitedZero(1));
    const nodeChildren = new Set([500]);
    const { reaper } = reaperOf(platform, nodeChildren);
    reaper.reap();
    nodeChildren.add(600);
    reaper.reap();
    expect(keeps.length).toBeGreaterThan(0);
    for (const keep of keeps) expect(keep).toBe(nodeChildren);
    expect([...keeps[0]]).toEqual([500, 600]);
  });

  it('one of Node’s first in line (blocked): the walk past it, this once, and the caller is told (libuv may have missed it)', () => {
    const { platform } = zombies([...exitedZero(1), 'blocked']);
    let walked = 0;
    platform.reapZombies = () => (walked++, { reaped: [{ pid: 7, code: 1, signal: null }], notYet: 0 });
    const { reaper } = reaperOf(platform);
    expect(reaper.reap()).toEqual({
      reaped: [
        { code: 0, signal: null },
        { code: 1, signal: null },
      ],
      more: false,
      nodeZombie: true,
    });
    expect(walked).toBe(1);
  });

  it('a platform with the walk alone walks; one with neither reaps nothing', () => {
    const platform = new FakePlatform();
    const { reaper } = reaperOf(platform);
    expect(reaper.reap()).toEqual({ reaped: [], more: false, nodeZombie: false });
    platform.reapZombies = () => ({ reaped: [{ pid: 7, code: 2, signal: null }], notYet: 0 });
    expect(reaper.reap()).toEqual({ reaped: [{ code: 2, signal: null }], more: false, nodeZombie: false });
  });

  it('each death: its status as the command’s would be (a signal by its name), said at -v, and told', () => {
    const { platform } = zombies([
      { pid: 700, code: null, signal: 9 },
      { pid: 701, code: 3, signal: null },
    ]);
    const { reaper, lines, died } = reaperOf(platform, new Set(), 1);
    expect(reaper.reap().reaped).toEqual([
      { code: null, signal: 'SIGKILL' },
      { code: 3, signal: null },
    ]);
    expect(lines).toEqual(['[gsup] reaped pid 700 (signal SIGKILL)', '[gsup] reaped pid 701 (code 3)']);
    expect(died).toEqual([
      [700, { code: null, signal: 'SIGKILL' }],
      [701, { code: 3, signal: null }],
    ]);
  });

  it('a death of a signal with no name here (a real-time one): its number, said at -v', () => {
    const { platform } = zombies([{ pid: 702, code: null, signal: 36 }]);
    const { reaper, lines, died } = reaperOf(platform, new Set(), 1);
    expect(reaper.reap().reaped).toEqual([{ code: null, signal: null, signo: 36 }]);
    expect(lines).toEqual(['[gsup] reaped pid 702 (signal 36)']);
    expect(died).toEqual([[702, { code: null, signal: null, signo: 36 }]]);
  });

  it('a child that was none of the tree’s (a stranger, gsup’s own from before its first spawn): reaped, said, no status', () => {
    const { platform } = zombies([
      { pid: 800, code: 7, signal: null },
      { pid: 801, code: 0, signal: null },
    ]);
    const { reaper, lines } = reaperOf(platform, new Set(), 1, new Set([800]));
    expect(reaper.reap().reaped).toEqual([{ code: 0, signal: null }]);
    expect(lines).toEqual(["[gsup] reaped pid 800 (code 7, not the tree's)", '[gsup] reaped pid 801 (code 0)']);
    platform.reapZombies = () => ({ reaped: [{ pid: 802, code: 5, signal: null }], notYet: 0 });
    const swept = reaperOf(platform, new Set(), 0, new Set([802]));
    expect(swept.reaper.sweep()).toEqual({ reaped: [], notYet: 0 });
  });

  it('the sweep at the end: the walk, and how many zombies cannot be reaped yet', () => {
    const platform = new FakePlatform();
    const { reaper } = reaperOf(platform);
    expect(reaper.sweep()).toEqual({ reaped: [], notYet: 0 });
    platform.reapZombies = () => ({ reaped: [{ pid: 8, code: null, signal: 15 }], notYet: 2 });
    expect(reaper.sweep()).toEqual({ reaped: [{ code: null, signal: 'SIGTERM' }], notYet: 2 });
  });
});
