import { afterEach, describe, expect, it, vi } from 'vitest';
import { MARK_VARIABLE, Provenance } from '../../../src/engine/tree/provenance.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { logTreeChanges } from '../../../src/engine/tree/changes.js';
import { Logger } from '../../../src/output/log.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Snapshot } from '../../../src/engine/machine/values.js';

// As PID 1 gsup is sent every orphan of its namespace: a child of gsup is the tree's when a look saw it
// descend from a run, or it carries the mark of this gsup's runs.

const GSUP = 1;

function pid1Tree(strict = true) {
  const platform = new FakePlatform();
  const provenance = new Provenance(platform, 'tok');
  const nodeChildren = new Set<number>();
  const tree = new ProcessTree(platform, GSUP, { provenance, nodeChildren, strict }, true);
  return { platform, provenance, nodeChildren, tree };
}

const pids = (infos: Array<{ pid: number }>) => infos.map((info) => info.pid).sort((a, b) => a - b);

afterEach(() => {
  vi.useRealTimers();
});

describe('the mark of a run', () => {
  it('is this gsup’s first, keeps the marks of the gsups around it, and is never doubled', () => {
    const { provenance } = pid1Tree();
    expect(provenance.env({ PATH: '/bin' }, 1)).toEqual({ PATH: '/bin', [MARK_VARIABLE]: 'tok.1' });
    expect(provenance.env({ [MARK_VARIABLE]: 'outer.3' }, 2)[MARK_VARIABLE]).toBe('tok.2 outer.3');
    expect(provenance.env({ [MARK_VARIABLE]: 'tok.1 outer.3' }, 2)[MARK_VARIABLE]).toBe('tok.2 outer.3');
  });
});

describe('gsup as PID 1: which of its children are the tree’s', () => {
  it('the command, a leftover seen below it, a marked orphan and an unreadable one are; a `docker exec` orphan is not', async () => {
    const { platform, nodeChildren, tree } = pid1Tree();
    platform.add({ pid: 10, ppid: GSUP }); // the command
    nodeChildren.add(10);
    platform.add({ pid: 11, ppid: 10 }); // its child, seen while the command lives
    expect(pids((await tree.look()).alive)).toEqual([10, 11]);
    platform.processes.delete(10);
    platform.add({ pid: 11, ppid: GSUP }); // the command exited: 11 is reparented to gsup
    platform.add({ pid: 12, ppid: GSUP }); // the command's too, orphaned before any look: marked
    platform.environs.set(12, { [MARK_VARIABLE]: 'tok.1' });
    platform.add({ pid: 20, ppid: GSUP }); // `docker exec … sh -c 'x &'`: no mark
    platform.environs.set(20, { PATH: '/bin' });
    platform.add({ pid: 21, ppid: 20 }); // what that orphan runs is not the tree's either
    platform.add({ pid: 22, ppid: GSUP }); // another gsup's mark (one nested outside this one) is not this gsup's
    platform.environs.set(22, { [MARK_VARIABLE]: 'other.1 tok2.1' });
    platform.add({ pid: 23, ppid: GSUP }); // its environment cannot be read (another user's): the tree wins
    platform.add({ pid: 24, ppid: 23 }); // and what it runs
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([11, 12, 23, 24]);
    expect(pids(notOurs(snapshot))).toEqual([20, 22]);
    expect(judgmentsOf(snapshot)).toEqual({ 12: 'mark', 20: 'absent', 22: 'absent', 23: 'unreadable' });
    const lines = said(tree, snapshot);
    expect(lines).toContain(
      "[gsup] pid 20 (cmd-20) is not the tree's: reparented to gsup without the mark of its runs (read: absent); " +
        'reaped, never signalled',
    );
    expect(lines).toContain("[gsup] pid 12 (cmd-12) is the tree's: reparented to gsup, it carries the mark of run 1");
    expect(lines).toContain(
      "[gsup] pid 23 (cmd-23) is the tree's: reparented to gsup, its mark cannot be read " +
        "(EACCES: another user's, and gsup lacks CAP_SYS_PTRACE), and nothing shows it is not",
    );
    // Each is read once: the next look knows them.
    const reads = platform.environReads;
    const next = await tree.look();
    expect(pids(next.alive)).toEqual([11, 12, 23, 24]);
    expect(next.judgments).toEqual([]);
    expect(platform.environReads).toBe(reads);
  });

  it('an unseen zombie is no member (it needs no judgment); a pid reused by a marked one is read anew', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 30, ppid: GSUP, state: 'Z' });
    platform.add({ pid: 31, ppid: GSUP });
    platform.environs.set(31, {});
    expect((await tree.look()).members).toEqual([]);
    platform.add({ pid: 31, ppid: GSUP, startTime: 9000 });
    platform.environs.set(31, { [MARK_VARIABLE]: 'tok.2' });
    expect(pids((await tree.look()).alive)).toEqual([31]);
  });

  it('a read that does not answer is not waited for: the tree’s meanwhile, unsaid and not known; judged once it answers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 40, ppid: GSUP });
    platform.add({ pid: 42, ppid: 40 });
    platform.stuckEnvirons.add(40);
    const look = tree.look();
    await vi.advanceTimersByTimeAsync(1000);
    const snapshot = await look;
    expect(pids(snapshot.alive)).toEqual([40, 42]);
    expect(snapshot.judgments).toEqual([]); // no judgment yet: nothing said
    expect(snapshot.joined).toEqual([]); // nor known: it is judged again
    platform.add({ pid: 41, ppid: GSUP });
    platform.environs.set(41, { [MARK_VARIABLE]: 'tok.1' });
    expect(pids((await tree.look()).alive)).toEqual([40, 41, 42]);
    // Its read answers at last (the process left `D` state): the next look reads it again, and it is a stranger.
    platform.environs.set(40, { PATH: '/bin' });
    platform.unstickEnviron(40);
    await vi.advanceTimersByTimeAsync(0);
    const later = await tree.look();
    expect(pids(later.alive)).toEqual([41]);
    expect(judgmentsOf(later)).toEqual({ 40: 'absent' });
  });

  it('a read that fails for now (no fd left) is no judgment: the tree’s for this look, read again at the next', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 45, ppid: GSUP });
    platform.environs.set(45, { PATH: '/bin' });
    platform.failingEnvirons.add(45);
    const first = await tree.look();
    expect(pids(first.alive)).toEqual([45]);
    expect(first.judgments).toEqual([]);
    platform.failingEnvirons.delete(45);
    const second = await tree.look();
    expect(second.alive).toEqual([]);
    expect(judgmentsOf(second)).toEqual({ 45: 'absent' });
  });

  it('unreadable, but started before gsup first started anything with the mark: not the tree’s, with no read', async () => {
    const { platform, provenance, tree } = pid1Tree();
    platform.now = 1060;
    provenance.env({}, 1); // the first run's environment: from here on, processes may carry the mark
    platform.add({ pid: 50, ppid: GSUP }); // started at 1050: before
    platform.add({ pid: 58, ppid: GSUP }); // 1058, the tick before the run's: before
    platform.add({ pid: 59, ppid: GSUP }); // 1059: the same tick as the run's environment, perhaps after it
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([59]);
    expect(judgmentsOf(snapshot)).toEqual({ 50: 'before', 58: 'before', 59: 'unreadable' });
    expect(platform.environReads).toBe(1);
    expect(said(tree, snapshot)).toContain(
      "[gsup] pid 50 (cmd-50) is not the tree's: reparented to gsup, it started before gsup first started anything; " +
        'reaped, never signalled',
    );
  });

  it('unreadable, in the session of a process whose mark was read and is absent: not the tree’s', async () => {
    const { platform, tree } = pid1Tree();
    // `docker exec -it … bash` (no mark; its parent is the runtime, outside), which ran `su nobody -c 'x &'`.
    platform.add({ pid: 60, ppid: 0 });
    platform.environs.set(60, { PATH: '/bin' });
    platform.add({ pid: 61, ppid: GSUP, sid: 60, pgid: 61 });
    platform.add({ pid: 62, ppid: GSUP, sid: 60, pgid: 62 }); // a second one of that session: its leader read once
    const snapshot = await tree.look();
    expect(snapshot.alive).toEqual([]);
    // Its leader entered from outside (parent pid 0 there): a stranger, not read (issue 35).
    expect(judgmentsOf(snapshot)).toEqual({ 60: 'entered', 61: 'session', 62: 'session' });
    expect(platform.environReads).toBe(2);
    expect(said(tree, snapshot)).toContain(
      "[gsup] pid 61 (cmd-61) is not the tree's: its mark cannot be read (EACCES), and it is in the session of " +
        "pid 60, which is not the tree's; reaped, never signalled",
    );
  });

  it('unreadable, in a session whose leader is the tree’s, is unreadable too, is gsup, or is gone: the tree’s', async () => {
    const { platform, nodeChildren, tree } = pid1Tree();
    platform.add({ pid: 70, ppid: GSUP }); // the command, which leads its session
    nodeChildren.add(70);
    platform.add({ pid: 71, ppid: GSUP, sid: 70, pgid: 71 }); // in the command's session: no read of the command
    platform.add({ pid: 72, ppid: 5 }); // a leader gsup may not read either (its parent inside the namespace)
    platform.add({ pid: 73, ppid: GSUP, sid: 72, pgid: 73 });
    platform.add({ pid: 74, ppid: GSUP, sid: GSUP, pgid: 74 }); // in gsup's own session (`--target child`)
    platform.add({ pid: 75, ppid: GSUP, sid: 9999, pgid: 75 }); // its leader is gone
    platform.add({ pid: 76, ppid: 5 }); // a leader with this gsup's mark
    platform.environs.set(76, { [MARK_VARIABLE]: 'tok.1' });
    platform.add({ pid: 77, ppid: GSUP, sid: 76, pgid: 77 });
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([70, 71, 73, 74, 75, 77]);
    expect(judgmentsOf(snapshot)).toEqual({
      71: 'unreadable',
      73: 'unreadable',
      74: 'unreadable',
      75: 'unreadable',
      77: 'unreadable',
    });
    // 71, 73, 74, 75, 77, and the leaders 72 and 76: never the command, never gsup.
    expect(platform.environReads).toBe(7);
  });

  it('a leader whose read does not answer: the member waits for it (the tree’s meanwhile, no judgment)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 80, ppid: 5 });
    platform.stuckEnvirons.add(80);
    platform.add({ pid: 81, ppid: GSUP, sid: 80, pgid: 81 });
    const look = tree.look();
    await vi.advanceTimersByTimeAsync(1000);
    const snapshot = await look;
    expect(pids(snapshot.alive)).toEqual([81]);
    expect(snapshot.judgments).toEqual([]);
    expect(snapshot.joined).toEqual([]);
  });

  it('not PID 1 (subreaper): only the tree’s orphans come to gsup; each child is the tree’s, none read', async () => {
    const { platform, tree } = pid1Tree(false);
    platform.add({ pid: 50, ppid: GSUP });
    expect(pids((await tree.look()).alive)).toEqual([50]);
    expect(platform.environReads).toBe(0);
  });

  it('a stranger reaped: its status is none of the tree’s; one of the tree’s, or never judged, is', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 90, ppid: GSUP });
    platform.environs.set(90, {});
    platform.add({ pid: 91, ppid: GSUP });
    platform.environs.set(91, { [MARK_VARIABLE]: 'tok.1' });
    await tree.look();
    expect(tree.reapedApart(90)).toBe(true);
    expect(tree.reapedApart(90)).toBe(false); // forgotten once reaped: the pid is free again
    expect(tree.reapedApart(91)).toBe(false);
    expect(tree.reapedApart(92)).toBe(false);
  });
});

describe('gsup’s own children from before its first spawn (a preload’s, in gsup’s first image)', () => {
  it.each([true, false])(
    'are never the tree’s, nor what they start (as PID 1: %s); said once; reaped, their status is not the tree’s',
    async (strict) => {
      const { platform, nodeChildren, tree } = pid1Tree(strict);
      platform.add({ pid: 5, ppid: GSUP }); // the preload's detached child, there before the first spawn
      platform.add({ pid: 6, ppid: 5 });
      platform.environs.set(5, {});
      tree.noteChildrenBefore([5, 404]); // 404: gone already
      platform.add({ pid: 10, ppid: GSUP }); // the command
      nodeChildren.add(10);
      platform.environs.set(10, { [MARK_VARIABLE]: 'tok.1' });
      const snapshot = await tree.look();
      expect(pids(snapshot.alive)).toEqual([10]);
      expect(judgmentsOf(snapshot)).toEqual({ 5: 'own' });
      expect(said(tree, snapshot)).toEqual([
        '[gsup] pid 10 joined the tree (cmd-10)',
        "[gsup] pid 5 (cmd-5) is not the tree's: gsup's own child from before its first spawn (a preload's): " +
          'never waited for, nor its status taken',
      ]);
      expect(platform.environReads).toBe(0);
      expect((await tree.look()).judgments).toEqual([]); // said once
      expect(tree.reapedApart(5)).toBe(true);
      // Reaped, its pid is free: a later process with that pid (another start time) is judged as any other.
      platform.processes.delete(6);
      platform.add({ pid: 5, ppid: GSUP, startTime: 5000 });
      platform.environs.set(5, { [MARK_VARIABLE]: 'tok.1' });
      expect(pids((await tree.look()).alive)).toEqual([5, 10]);
    },
  );
});

describe('an orphan gone between the look’s listing and its read (a daemon’s first fork, exiting)', () => {
  it('is the tree’s meanwhile, with what it left: judged at the next look, the tree never taken for empty', async () => {
    const { platform, nodeChildren, tree } = pid1Tree();
    platform.add({ pid: 10, ppid: GSUP }); // the command, exited by now
    nodeChildren.add(10);
    platform.add({ pid: 14, ppid: GSUP }); // the daemon's first fork, reparented to gsup and exiting
    platform.goneEnvirons.add(14);
    platform.add({ pid: 15, ppid: 14 }); // the daemon it forked
    platform.processes.delete(10);
    const first = await tree.look();
    expect(pids(first.alive)).toEqual([14, 15]); // before: [] — gsup ended with the command, the daemon lost
    expect(first.judgments).toEqual([]);
    // It exited: its daemon is gsup's child now, and judged.
    platform.processes.delete(14);
    platform.add({ pid: 15, ppid: GSUP });
    platform.environs.set(15, { [MARK_VARIABLE]: 'tok.1' });
    const next = await tree.look();
    expect(pids(next.alive)).toEqual([15]);
    expect(judgmentsOf(next)).toEqual({ 15: 'mark' });
  });
});

describe('what gsup’s own children from before its first spawn start', () => {
  it.each([true, false])(
    'seen below one: gsup’s own too, wherever it is reparented, said once, its status not the tree’s (PID 1: %s)',
    async (strict) => {
      const { platform, nodeChildren, tree } = pid1Tree(strict);
      platform.add({ pid: 5, ppid: GSUP }); // the preload's launcher
      tree.noteChildrenBefore([5]);
      platform.add({ pid: 10, ppid: GSUP }); // the command
      nodeChildren.add(10);
      platform.environs.set(10, { [MARK_VARIABLE]: 'tok.1' });
      platform.add({ pid: 6, ppid: 5 }); // the helper it starts, seen below it
      expect(pids((await tree.look()).alive)).toEqual([10]);
      // The launcher exits: its helper is reparented to gsup (subreaper or PID 1), its environment readable.
      platform.processes.delete(5);
      expect(tree.reapedApart(5)).toBe(true);
      platform.add({ pid: 6, ppid: GSUP });
      platform.environs.set(6, { [MARK_VARIABLE]: 'tok.1' }); // even a mark it copied proves nothing
      const snapshot = await tree.look();
      expect(pids(snapshot.alive)).toEqual([10]);
      expect(judgmentsOf(snapshot)).toEqual({ 6: 'own' });
      expect(said(tree, snapshot)).toContain(
        "[gsup] pid 6 (cmd-6) is not the tree's: started by pid 5, gsup's own child from before its first spawn " +
          "(a preload's): never waited for, nor its status taken",
      );
      expect((await tree.look()).judgments).toEqual([]); // said once
      expect(platform.environReads).toBe(0);
      expect(tree.reapedApart(6)).toBe(true);
    },
  );

  it('as subreaper, once gsup had such a child, an orphan no look saw is judged as PID 1 judges one', async () => {
    const { platform, provenance, nodeChildren, tree } = pid1Tree(false);
    platform.add({ pid: 5, ppid: GSUP });
    tree.noteChildrenBefore([5]);
    platform.add({ pid: 40, ppid: GSUP, startTime: 1 }); // started before gsup's first spawn (the launcher's helper)
    platform.environs.set(40, {});
    platform.now = 2000;
    provenance.env({}, 1); // the first spawn: from now on what gsup starts carries the mark
    platform.add({ pid: 10, ppid: GSUP }); // the command
    nodeChildren.add(10);
    platform.add({ pid: 41, ppid: GSUP, startTime: 3000 }); // a daemon of the run, double-forked: marked
    platform.environs.set(41, { [MARK_VARIABLE]: 'tok.1' });
    platform.add({ pid: 42, ppid: GSUP, startTime: 3000 }); // started later by the launcher: no mark
    platform.environs.set(42, { PATH: '/bin' });
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([10, 41]);
    expect(judgmentsOf(snapshot)).toEqual({ 5: 'own', 40: 'before', 41: 'mark', 42: 'absent' });
  });

  it('as subreaper with no such child: orphans are the tree’s, nothing read', async () => {
    const { platform, tree } = pid1Tree(false);
    platform.add({ pid: 10, ppid: GSUP });
    platform.add({ pid: 42, ppid: GSUP });
    platform.environs.set(42, { PATH: '/bin' });
    expect(pids((await tree.look()).alive)).toEqual([10, 42]);
    expect(platform.environReads).toBe(0);
  });
});

const notOurs = (snapshot: Snapshot) => (snapshot.judgments ?? []).filter((v) => !v.ours).map((v) => v.info);

function judgmentsOf(snapshot: Snapshot): Record<number, string> {
  return Object.fromEntries((snapshot.judgments ?? []).map((judgment) => [judgment.info.pid, judgment.why]));
}

function said(tree: ProcessTree, snapshot: Snapshot): string[] {
  const lines: string[] = [];
  logTreeChanges(new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) }), tree, snapshot);
  return lines;
}
