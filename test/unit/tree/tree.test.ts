import { describe, expect, it } from 'vitest';
import { CommandLines } from '../../../src/engine/tree/command-lines.js';
import { roots, units } from '../../../src/engine/tree/targets.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import { restrictTargets, unreached, type Target } from '../../../src/engine/machine/ledger/ledger.js';

const GSUP = 100;

function snapshotOf(platform: FakePlatform) {
  return new ProcessTree(platform, GSUP).look();
}

describe('ProcessTree', () => {
  it('finds descendants, keeps a known process that was reparented, and never a reused pid', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: GSUP, ppid: 1 });
    platform.add({ pid: 200, ppid: GSUP });
    platform.add({ pid: 201, ppid: 200, pgid: 200, sid: 200 });
    platform.add({ pid: 300, ppid: 1 }); // a stranger
    const tree = new ProcessTree(platform, GSUP);
    let snapshot = await tree.look();
    expect(snapshot.members.map((info) => info.pid).sort()).toEqual([200, 201]);

    // 201 double-forks away: reparented to init, still the same process.
    platform.processes.get(201)!.ppid = 1;
    snapshot = await tree.look();
    expect(snapshot.members.map((info) => info.pid).sort()).toEqual([200, 201]);

    // 201 dies and its pid is reused by someone else: not ours.
    platform.processes.set(201, { pid: 201, ppid: 1, pgid: 201, sid: 201, state: 'S', startTime: 99_999, name: 'x' });
    snapshot = await tree.look();
    expect(snapshot.members.map((info) => info.pid)).toEqual([200]);
    expect(snapshot.left).toContain(201);
  });

  it('a pid another process of the tree took since the last look: that one joined, the pid did not leave', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP });
    platform.add({ pid: 201, ppid: 200, pgid: 200, sid: 200, startTime: 10 });
    const tree = new ProcessTree(platform, GSUP);
    await tree.look();
    platform.processes.set(201, { pid: 201, ppid: 200, pgid: 200, sid: 200, state: 'S', startTime: 20, name: 'y' });
    let snapshot = await tree.look();
    expect(snapshot.joined.map((info) => [info.pid, info.startTime])).toEqual([[201, 20]]);
    expect(snapshot.left).toEqual([]);
    // Known from then on: the next look sees no change.
    snapshot = await tree.look();
    expect([snapshot.joined, snapshot.left]).toEqual([[], []]);
    platform.processes.delete(201);
    expect((await tree.look()).left).toEqual([201]);
  });

  it('a pid gsup reaped and a stranger took in the same tick (same start time): neither known nor the session', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP, startTime: 7 }); // the command, leading session 200
    const tree = new ProcessTree(platform, GSUP);
    await tree.setCommand(200);
    expect((await tree.look()).members.map((info) => info.pid)).toEqual([200]);
    // Node reaps the command; the pid comes back at once, in the same tick, to a stranger leading session 200.
    platform.processes.delete(200);
    tree.wasReaped(200);
    platform.add({ pid: 200, ppid: 1, startTime: 7 });
    platform.add({ pid: 201, ppid: 200, startTime: 8, sid: 200, pgid: 200 }); // its child, in its session
    let snapshot = await tree.look();
    expect(snapshot.members).toEqual([]);
    expect(snapshot.left).toEqual([200]);
    expect(snapshot.leftCommands).toEqual([200]);
    snapshot = await tree.look(); // and after that look too
    expect([snapshot.members, snapshot.joined, snapshot.left]).toEqual([[], [], []]);
  });

  it('a command read only after gsup reaped it (its pid taken again) is not taken for the command', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: 1, startTime: 7 }); // already the stranger by then
    const tree = new ProcessTree(platform, GSUP);
    const read = tree.setCommand(200);
    tree.wasReaped(200);
    expect(await read).toBeUndefined();
    expect(tree.commandInfo).toBeUndefined();
    expect((await tree.look()).members).toEqual([]);
  });

  it('counts a zombie as a member but not as alive', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP, state: 'Z' });
    const snapshot = await snapshotOf(platform);
    expect(snapshot.members).toHaveLength(1);
    expect(snapshot.alive).toHaveLength(0);
  });

  it('includes the command session: a process that left the ancestry but not the session', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP, startTime: 5 });
    platform.add({ pid: 250, ppid: 1, pgid: 240, sid: 200, startTime: 6 });
    const tree = new ProcessTree(platform, GSUP);
    tree.setCommand(200);
    expect((await tree.look()).members.map((info) => info.pid).sort()).toEqual([200, 250]);
  });
});

const names = (targets: Target[]) =>
  targets.map((target) => (target.kind === 'group' ? `g${target.pgid}` : `p${target.process.pid}`)).sort();

describe('plan', () => {
  function setup(): FakePlatform {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP }); // command, group 200
    platform.add({ pid: 201, ppid: 200, pgid: 200, sid: 200 });
    platform.add({ pid: 210, ppid: 201, pgid: 210, sid: 210 }); // escaped daemon, its own group, its parent alive
    platform.add({ pid: 220, ppid: 201, pgid: 50, sid: 50 }); // joined a group with a stranger in it
    platform.add({ pid: 51, ppid: 1, pgid: 50, sid: 50 }); // the stranger
    platform.add({ pid: 230, ppid: GSUP, pgid: 230, sid: 230 }); // an orphan reparented to gsup: a root
    return platform;
  }

  it('units: each fully-owned group once; a group with strangers in it, member by member', async () => {
    expect(names(units(await snapshotOf(setup()), 1))).toEqual(['g200', 'g210', 'g230', 'p220']);
  });

  it('units: never gsup’s own group', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP, pgid: 7 });
    platform.add({ pid: 201, ppid: 200, pgid: 7 });
    const targets = units(await snapshotOf(platform), 7);
    expect(targets.every((target) => target.kind === 'process')).toBe(true);
    expect(targets).toHaveLength(2);
  });

  it('roots: a group whose parent lives belongs to that parent; orphans are roots', async () => {
    expect(names(roots(await snapshotOf(setup()), 'group', 1))).toEqual(['g200', 'g230']);
  });

  it('roots: a nested init (its child in a group of its own) gets the signal, its child does not', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP }); // inner gsup / tini / dumb-init, group 200
    platform.add({ pid: 300, ppid: 200 }); // its command: session and group 300
    platform.add({ pid: 301, ppid: 300, pgid: 300, sid: 300 });
    expect(names(roots(await snapshotOf(platform), 'group', 1))).toEqual(['g200']);
    // The inner init dies without stopping its child: the child's group is reparented, a root now.
    platform.processes.delete(200);
    platform.processes.get(300)!.ppid = GSUP;
    expect(names(roots(await snapshotOf(platform), 'group', 1))).toEqual(['g300']);
  });

  it('tree: each process once; child: the child alone, then what it left', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 200, ppid: GSUP, pgid: 1, sid: 1 }); // the child, in gsup's own group 1
    platform.add({ pid: 201, ppid: 200, pgid: 1, sid: 1 });
    platform.add({ pid: 210, ppid: 201, pgid: 210, sid: 210 });
    expect(roots(await snapshotOf(platform), 'tree', 1)).toHaveLength(3);
    expect(names(roots(await snapshotOf(platform), 'child', 1))).toEqual(['p200']);
    platform.processes.delete(200);
    platform.processes.get(201)!.ppid = GSUP; // reparented to gsup, the subreaper
    expect(names(roots(await snapshotOf(platform), 'child', 1))).toEqual(['p201']);
  });

  it('unreached: a unit reached before is left out; one partly reached becomes its other members', async () => {
    const snapshot = await snapshotOf(setup());
    const targets = units(snapshot, 1);
    const key = (pid: number) => `${pid}:${1000 + pid}`;
    expect(names(unreached(targets, new Set([key(200), key(201)])))).toEqual(['g210', 'g230', 'p220']);
    expect(names(unreached(targets, new Set([key(200)])))).toEqual(['g210', 'g230', 'p201', 'p220']);
  });

  it('restrictTargets keeps only the wanted pids, splitting groups', async () => {
    const only = restrictTargets(units(await snapshotOf(setup()), 1), new Set([201, 210]));
    expect(names(only)).toEqual(['g210', 'p201']);
  });
});

describe('CommandLines: read ahead, off the loop, never waited for long', () => {
  it('a read that never ends (a process in D state) is waited for 100 ms once; with both readers stuck, not at all', async () => {
    const platform = new FakePlatform();
    const stuck = [platform.add({ pid: 10, ppid: 1, name: 'node' }), platform.add({ pid: 11, ppid: 1, name: 'node' })];
    const plain = platform.add({ pid: 12, ppid: 1, name: 'node' });
    const read = platform.readCommandLine.bind(platform);
    platform.readCommandLine = (pid) => (pid === 10 || pid === 11 ? new Promise(() => {}) : read(pid));
    const lines = new CommandLines(platform);
    const started = performance.now();
    await lines.learn(stuck);
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(lines.of(stuck[0])).toBeUndefined();
    expect(lines.describe(stuck[0])).toBe('[node]');
    // libuv's timers run on a coarser clock and may fire a moment before 100 ms: both reads surely past it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Every reader stuck: nothing new can be read now, and nothing is waited for (settled within microtasks, no timer).
    let settled = false;
    void lines.learn([...stuck, plain]).then(() => (settled = true));
    for (let tick = 0; tick < 5; tick++) await Promise.resolve();
    expect(settled).toBe(true);
    expect(lines.of(plain)).toBeUndefined();
  });

  it('a pid taken by another process is another line; a read in flight for a process forgotten meanwhile is not kept', async () => {
    const platform = new FakePlatform();
    const first = platform.add({ pid: 10, ppid: 1, name: 'node', startTime: 1 });
    const lines = new CommandLines(platform);
    await lines.learn([first]);
    expect(lines.of(first)).toBe('cmd-10');
    const second = { ...first, startTime: 2 };
    platform.commandLines.set(10, 'second');
    expect(lines.of(second)).toBeUndefined();
    await lines.learn([second]);
    expect([lines.of(first), lines.of(second), lines.describePid(10)]).toEqual([undefined, 'second', 'second']);
    // A read that answers after a look forgot its process.
    let answer!: (line: string) => void;
    platform.readCommandLine = () => new Promise((resolve) => (answer = resolve));
    const third = platform.add({ pid: 11, ppid: 1, name: 'node' });
    void lines.learn([third]);
    lines.keepOnly(new Map([[10, second]]));
    answer('late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.of(third)).toBeUndefined();
    expect(lines.of(second)).toBe('second');
  });

  it('wants node processes, gsup’s children, session leaders and the ten oldest; forgets what is gone', async () => {
    const platform = new FakePlatform();
    const all = Array.from({ length: 30 }, (_, index) =>
      platform.add({ pid: 100 + index, ppid: 1, pgid: 1, sid: 1, name: 'sleep', startTime: 5000 - index }),
    );
    const node = platform.add({ pid: 200, ppid: 1, pgid: 1, sid: 1, name: 'node', startTime: 9000 });
    const child = platform.add({ pid: 201, ppid: process.pid, pgid: 1, sid: 1, name: 'sh', startTime: 9001 });
    const lines = new CommandLines(platform);
    const wanted = lines.wanted({ alive: [...all, node, child], joined: [] }, false);
    expect(wanted.map((info) => info.pid).sort()).toEqual([120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 200, 201]);
    await lines.learn(wanted);
    expect(lines.of(node)).toBe('cmd-200');
    lines.keepOnly(new Map([[201, child]]));
    expect(lines.of(node)).toBeUndefined();
    expect(lines.of(child)).toBe('cmd-201');
  });
});
