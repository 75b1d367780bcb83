import { describe, expect, it } from 'vitest';
import { Children } from '../../../src/engine/children/children.js';
import { notStarted, type CommandRun } from '../../../src/engine/children/run.js';
import { Logger } from '../../../src/output/log.js';
import type { ReapedChild } from '../../../src/platform/index.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { CommandExit } from '../../../src/engine/machine/values.js';

// gsup's own children on a fake platform: Node's (never reaped here), the orphans it reaps, and whether any is left.

const GSUP = process.pid;
const silent = new Logger({ verbosity: -1, write: () => {} });

/** Children over a platform whose zombies are these (reaped one by one, then by a walk that finds `walked`). */
function childrenOf(waiting: ReapedChild[] = [], walked: ReapedChild[] = [], notYet = 0) {
  const platform = new FakePlatform();
  const keeps: Array<ReadonlySet<number>> = [];
  platform.reapOne = (keep) => (keeps.push(keep), waiting.shift() ?? 'none');
  platform.reapZombies = () => ({ reaped: walked.splice(0), notYet });
  return { platform, keeps, children: new Children(platform, silent) };
}

const run = (fields: Partial<CommandRun>): CommandRun => ({ ...notStarted(), ...fields });

describe('Children', () => {
  it('not reaping (neither PID 1 nor subreaper): reap and sweep leave every zombie to whoever reaps it', () => {
    const { children, keeps } = childrenOf([{ pid: 7, code: 0, signal: null }], [{ pid: 8, code: 0, signal: null }], 1);
    expect(children.reap()).toEqual({ reaped: [], more: false, nodeZombie: false });
    expect(children.sweep()).toEqual({ reaped: [], notYet: 0 });
    expect(keeps).toEqual([]);
  });

  it('reaping: a batch; the sweep at the end, a batch then the walk, and what cannot be reaped yet', () => {
    const { children } = childrenOf(
      [{ pid: 7, code: 0, signal: null }],
      [
        { pid: 8, code: null, signal: 9 },
        { pid: 9, code: 4, signal: null },
      ],
      2,
    );
    children.reaping = true;
    expect(children.sweep()).toEqual({
      reaped: [
        { code: 0, signal: null },
        { code: null, signal: 'SIGKILL' },
        { code: 4, signal: null },
      ],
      notYet: 2,
    });
  });

  it('a command gsup spawned itself (posix_spawn): reaped here, its status told to its spawn and to no one else', () => {
    const waiting: ReapedChild[] = [
      { pid: 7, code: null, signal: 15 },
      { pid: 8, code: 0, signal: null },
    ];
    const platform = new FakePlatform();
    const seen: Array<[number, boolean, boolean]> = [];
    // What the reaper is told to leave to libuv, as it is at each call: Node's own (9), never gsup's spawn (7).
    platform.reapOne = (keep) => (seen.push([keep.size, keep.has(7), keep.has(9)]), waiting.shift() ?? 'none');
    const children = new Children(platform, silent);
    children.reaping = true;
    children.nodeChildren.add(7).add(9);
    const told: CommandExit[] = [];
    children.reapHere(7, (exit) => told.push(exit));
    expect(children.reap().reaped).toEqual([{ code: 0, signal: null }]);
    expect(told).toEqual([{ code: null, signal: 'SIGTERM' }]);
    expect(seen[0]).toEqual([1, false, true]);
  });

  it('two supervisions at once: the one that reaps the other’s command tells that command’s spawn', () => {
    const waiting: ReapedChild[] = [{ pid: 21, code: 2, signal: null }];
    const platform = new FakePlatform();
    platform.reapOne = () => waiting.shift() ?? 'none';
    const [one, two] = [new Children(platform, silent), new Children(platform, silent)];
    one.reaping = two.reaping = true;
    two.nodeChildren.add(21);
    const told: CommandExit[] = [];
    two.reapHere(21, (exit) => told.push(exit));
    expect(one.reap().reaped).toEqual([]);
    expect(told).toEqual([{ code: 2, signal: null }]);
  });

  it('a helper (pm2 kill) is Node’s child until it exits: never reaped by gsup meanwhile', () => {
    const { children, keeps } = childrenOf();
    children.reaping = true;
    children.spawnHelper(() => 900);
    children.spawnHelper(() => undefined); // not started: nothing to keep
    expect([...children.helpers]).toEqual([900]);
    expect([...children.nodeChildren]).toEqual([900]);
    children.reap();
    expect(keeps.at(-1)?.has(900)).toBe(true);
    children.helperExited(900);
    expect(children.helpers.size).toBe(0);
    children.reap();
    expect(keeps.at(-1)?.has(900)).toBe(false);
  });

  it('the tree is gone when gsup, reaping, has no child left and adopted no daemon from elsewhere', () => {
    const { platform, children } = childrenOf();
    platform.hasChildren = () => false;
    expect(children.treeGone(false)).toBe(false); // not reaping: orphans may be anywhere
    children.reaping = true;
    expect(children.treeGone(false)).toBe(true);
    expect(children.treeGone(true)).toBe(false);
    platform.hasChildren = () => true;
    expect(children.treeGone(false)).toBe(false);
    // Without the cheap answer: gsup's children listed; none listable is no answer.
    platform.hasChildren = undefined;
    platform.ownChildren = () => [];
    expect(children.treeGone(false)).toBe(true);
    platform.ownChildren = () => [501];
    expect(children.treeGone(false)).toBe(false);
    platform.ownChildren = () => undefined;
    expect(children.treeGone(false)).toBe(false);
  });

  it('a command that is gone but not reported (a lost SIGCHLD): libuv is nudged with a SIGCHLD of gsup’s own', async () => {
    const { platform, children } = childrenOf();
    const command = platform.add({ pid: 500, ppid: GSUP });
    expect(await children.nudgeIfLost(run({ pid: 500 }))).toBe(false);
    expect(await children.nudgeIfLost(run({ pid: undefined }))).toBe(false);
    command.state = 'Z';
    expect(await children.nudgeIfLost(run({ pid: 500, exit: { code: 0, signal: null } }))).toBe(false);
    expect(platform.kills).toEqual([]);
    expect(await children.nudgeIfLost(run({ pid: 500 }))).toBe(true);
    platform.processes.delete(500);
    expect(await children.nudgeIfLost(run({ pid: 500 }))).toBe(true);
    expect(platform.kills).toEqual([
      { pid: GSUP, signal: 'SIGCHLD' },
      { pid: GSUP, signal: 'SIGCHLD' },
    ]);
  });

  it('a helper (pm2 kill) is told by its pid and a start within its life, also after its exit: not the tree’s', () => {
    const { platform, children } = childrenOf();
    platform.now = 5000;
    children.spawnHelper(() => 40);
    const helper = { pid: 40, ppid: GSUP, pgid: 40, sid: 40, state: 'S', startTime: 5000, name: 'node' };
    expect(children.helpers.has(40)).toBe(true);
    expect(children.wasHelper(helper)).toBe(true);
    platform.now = 5100;
    children.helperExited(40);
    expect(children.helpers.has(40)).toBe(false);
    expect(children.wasHelper(helper)).toBe(true); // a look taken before its exit, read after
    expect(children.wasHelper({ ...helper, startTime: 5200 })).toBe(false); // its pid, reused later
    expect(children.wasHelper({ ...helper, startTime: 4000 })).toBe(false);
    expect(children.wasHelper({ ...helper, pid: 41 })).toBe(false);
  });
});
