import { describe, expect, it } from 'vitest';
import { Provenance } from '../../../src/engine/tree/provenance.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Snapshot } from '../../../src/engine/machine/values.js';

// While two runs live (a reload), the tree says which run each member is of (Snapshot.runs): the old run's tree is
// retired alone, and nothing of the new one with it.

const GSUP = 100;

/** gsup, run 1's command 200 (its own session) started at tick 1000 with an app, and the tree that knows it. */
function setup({ strict = false } = {}) {
  const platform = new FakePlatform();
  platform.add({ pid: GSUP, ppid: 1, pgid: 1, sid: 1 });
  platform.enableReaping(GSUP);
  const provenance = new Provenance(platform, 'tok');
  const origin = { provenance, nodeChildren: new Set<number>(), strict };
  const tree = new ProcessTree(platform, GSUP, origin);
  /** Run `run`'s command (pid) spawned now, at tick `at`, with its own session: the current run, or beside it. */
  const spawn = async (run: number, pid: number, at: number, current = run === 1) => {
    platform.now = at;
    platform.add({ pid, ppid: GSUP, startTime: at });
    origin.nodeChildren.add(pid);
    platform.environs.set(pid, { GSUP_RUN: `tok.${run}` });
    await tree.setCommand(pid, run, current);
  };
  return { platform, tree, spawn, origin };
}

const runsOf = (snapshot: Snapshot) => Object.fromEntries([...(snapshot.runs ?? [])].sort(([a], [b]) => a - b));

describe('which run a member is of', () => {
  it('with one run nothing is told apart; with two, by descent from each command', async () => {
    const { platform, tree, spawn } = setup();
    await spawn(1, 200, 1000);
    platform.add({ pid: 201, ppid: 200, pgid: 200, sid: 200, startTime: 1001 });
    expect((await tree.look()).runs).toBeUndefined();
    await spawn(2, 300, 2000);
    platform.add({ pid: 301, ppid: 300, pgid: 300, sid: 300, startTime: 2001 });
    platform.add({ pid: 302, ppid: 301, pgid: 300, sid: 300, startTime: 2002 });
    expect(runsOf(await tree.look())).toEqual({ 200: 1, 201: 1, 300: 2, 301: 2, 302: 2 });
  });

  it('a process keeps its run when it is reparented to gsup (a double fork), even after the new run started', async () => {
    const { platform, tree, spawn } = setup();
    await spawn(1, 200, 1000);
    await spawn(2, 300, 2000);
    platform.add({ pid: 201, ppid: 200, pgid: 201, sid: 201, startTime: 2500 }); // setsid'd, after run 2's spawn
    expect(runsOf(await tree.look())[201]).toBe(1);
    platform.processes.get(201)!.ppid = GSUP;
    expect(runsOf(await tree.look())[201]).toBe(1);
  });

  it('an orphan no look saw descend: its session, else its mark, else by when it started', async () => {
    const { platform, tree, spawn } = setup();
    await spawn(1, 200, 1000);
    await spawn(2, 300, 2000);
    // In run 1's session (no setsid), though reparented before any look.
    platform.add({ pid: 210, ppid: GSUP, pgid: 210, sid: 200, startTime: 2100 });
    // Its own session, and run 1's mark in its environment.
    platform.add({ pid: 220, ppid: GSUP, pgid: 220, sid: 220, startTime: 2200 });
    platform.environs.set(220, { GSUP_RUN: 'tok.1' });
    // Its mark cannot be read: before run 2's spawn it is run 1's, after it run 2's.
    platform.add({ pid: 230, ppid: GSUP, pgid: 230, sid: 230, startTime: 1500 });
    platform.add({ pid: 240, ppid: GSUP, pgid: 240, sid: 240, startTime: 2400 });
    const runs = runsOf(await tree.look());
    expect([runs[210], runs[220], runs[230], runs[240]]).toEqual([1, 1, 1, 2]);
  });

  it('as PID 1, a judged orphan’s mark says its run', async () => {
    const { platform, tree, spawn } = setup({ strict: true });
    await spawn(1, 200, 1000);
    await spawn(2, 300, 2000);
    platform.add({ pid: 220, ppid: GSUP, pgid: 220, sid: 220, startTime: 2200 });
    platform.environs.set(220, { GSUP_RUN: 'tok.1' });
    platform.add({ pid: 320, ppid: GSUP, pgid: 320, sid: 320, startTime: 2300 });
    platform.environs.set(320, { GSUP_RUN: 'tok.2' });
    const snapshot = await tree.look();
    expect(snapshot.judgments?.map((judgment) => judgment.detail)).toEqual(['1', '2']);
    expect([runsOf(snapshot)[220], runsOf(snapshot)[320]]).toEqual([1, 2]);
  });

  it('a run retired is forgotten: its last member gone, one run again, nothing told apart', async () => {
    const { platform, tree, spawn } = setup();
    await spawn(1, 200, 1000);
    await spawn(2, 300, 2000);
    tree.setCurrent(2);
    expect(tree.commandInfo?.pid).toBe(300);
    expect((await tree.look()).runs).toBeDefined();
    platform.processes.delete(200);
    tree.liveRuns([2]);
    expect((await tree.look()).runs).toBeUndefined();
    // A restart: the new current run alone is watched.
    await spawn(3, 400, 3000, true);
    expect((await tree.look()).runs).toBeUndefined();
  });
});
