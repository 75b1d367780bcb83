import { describe, expect, it } from 'vitest';
import { MARK_VARIABLE, Provenance } from '../../../src/engine/tree/provenance.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { logTreeChanges } from '../../../src/engine/tree/changes.js';
import { Logger } from '../../../src/output/log.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Snapshot } from '../../../src/engine/machine/values.js';

// What is never the tree's (issue 35): what entered gsup's PID namespace from outside (`docker exec`: parent pid 0
// there) and what descends from it, remembered from the first look that sees them; what gsup may not signal.

const GSUP = 1;

function pid1Tree(strict = true, sid = 0) {
  const platform = new FakePlatform();
  platform.add({ pid: GSUP, ppid: 0, pgid: sid, sid }); // gsup itself: PID 1, its parent outside the namespace
  const provenance = new Provenance(platform, 'tok');
  const nodeChildren = new Set<number>([10]);
  const tree = new ProcessTree(platform, GSUP, { provenance, nodeChildren, strict }, true);
  platform.add({ pid: 10, ppid: GSUP, pgid: 10, sid: 10 }); // the command
  platform.environs.set(10, { [MARK_VARIABLE]: 'tok.1' });
  return { platform, tree };
}

const pids = (infos: Array<{ pid: number }>) => infos.map((info) => info.pid).sort((a, b) => a - b);
const judgmentsOf = (snapshot: Snapshot) =>
  Object.fromEntries((snapshot.judgments ?? []).map((judgment) => [judgment.info.pid, judgment.why]));

function said(tree: ProcessTree, snapshot: Snapshot): string[] {
  const lines: string[] = [];
  logTreeChanges(new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) }), tree, snapshot);
  return lines.filter((line) => !line.includes('joined the tree'));
}

describe('what entered gsup’s PID namespace from outside', () => {
  it('seen below an entrant, a daemon whose mark cannot be read stays a stranger once orphaned to gsup', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 30, ppid: 0, pgid: 30, sid: 0 }); // `docker exec`'s shell: its parent is outside
    platform.add({ pid: 31, ppid: 30, pgid: 31, sid: 31 }); // the daemon it started (setsid), a titled one
    platform.add({ pid: 32, ppid: 31, pgid: 31, sid: 31 }); // and its worker
    const first = await tree.look();
    expect(pids(first.alive)).toEqual([10]);
    expect(judgmentsOf(first)).toEqual({ 30: 'entered' });
    expect(said(tree, first)).toEqual([
      "[gsup] pid 30 (cmd-30) is not the tree's: it entered gsup's PID namespace from outside (seen with parent pid " +
        '0 there: docker exec, kubectl exec, nsenter): neither it nor what it starts is ever signalled or waited for',
    ]);
    // The shell leaves: the daemon is gsup's child now, its environment unreadable (once, the tree would win).
    platform.processes.delete(30);
    platform.add({ pid: 31, ppid: GSUP, pgid: 31, sid: 31 });
    platform.add({ pid: 33, ppid: 32, pgid: 31, sid: 31 }); // forked after: what descends from it is a stranger too
    const reads = platform.environReads;
    const second = await tree.look();
    expect(pids(second.alive)).toEqual([10]);
    expect(judgmentsOf(second)).toEqual({ 31: 'entered' });
    expect(platform.environReads).toBe(reads); // no read: it is known
    expect(said(tree, second)).toEqual([
      "[gsup] pid 31 (cmd-31) is not the tree's: it descends from pid 30, which entered gsup's PID namespace from " +
        'outside: never signalled or waited for',
    ]);
    // Said once; its status (once reaped) is none of the tree's.
    expect(judgmentsOf(await tree.look())).toEqual({});
    expect(tree.reapedApart(31)).toBe(true);
  });

  it('orphaned before any look saw it, in a session of its own: nothing tells it apart, the tree wins', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 31, ppid: GSUP, pgid: 31, sid: 31 }); // unreadable mark
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([10, 31]);
    expect(judgmentsOf(snapshot)).toEqual({ 31: 'unreadable' });
  });

  it('session id 0 says "outside" only where gsup’s own session began inside the namespace', async () => {
    // gsup in a session of its own (a runtime's setsid): a daemon in a session that began outside is a stranger.
    const inside = pid1Tree(true, GSUP);
    inside.platform.add({ pid: 31, ppid: GSUP, pgid: 0, sid: 0 });
    const seen = await inside.tree.look();
    expect(pids(seen.alive)).toEqual([10]);
    expect(judgmentsOf(seen)).toEqual({ 31: 'entered' });
    expect(said(inside.tree, seen)[0]).toContain("its session began outside gsup's PID namespace (session id 0 there");
    // gsup's own session began outside (unshare with no setsid): its tree's sessions may show 0 too.
    const outside = pid1Tree(true, 0);
    outside.platform.add({ pid: 31, ppid: GSUP, pgid: 0, sid: 0 });
    expect(pids((await outside.tree.look()).alive)).toEqual([10, 31]);
  });

  it('not as PID 1 a parent pid 0 is an ancestor’s (the namespace’s init): nothing is a stranger by it', async () => {
    const { platform, tree } = pid1Tree(false);
    platform.processes.get(GSUP)!.ppid = 7;
    platform.add({ pid: 7, ppid: 0 }); // init, gsup's parent
    platform.add({ pid: 11, ppid: 10 });
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([10, 11]);
    expect(judgmentsOf(snapshot)).toEqual({});
  });
});

describe('what gsup may not signal', () => {
  it('a root daemon `docker exec -u root` left under a non-root gsup: no member, never read, said once', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 40, ppid: GSUP, pgid: 40, sid: 40 });
    platform.denied.add(40);
    const reads = platform.environReads;
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([10]);
    expect(judgmentsOf(snapshot)).toEqual({ 40: 'denied' });
    expect(platform.environReads).toBe(reads); // never read (the command is Node’s child: never read either)
    expect(said(tree, snapshot)).toEqual([
      "[gsup] pid 40 (cmd-40) is not the tree's: gsup may not signal it (EPERM: another user's, and gsup lacks " +
        'CAP_KILL): never waited for, nor counted',
    ]);
    expect(judgmentsOf(await tree.look())).toEqual({});
    expect(tree.reapedApart(40)).toBe(true);
  });

  it('a process of the tree gsup may not signal is no member, asked once; what it starts that gsup may signal is', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 11, ppid: 10, pgid: 10, sid: 10 }); // sudo's child, root
    platform.add({ pid: 12, ppid: 11, pgid: 10, sid: 10 }); // which dropped back to the app's user
    platform.denied.add(11);
    const first = await tree.look();
    expect(pids(first.alive)).toEqual([10, 12]);
    expect(judgmentsOf(first)).toEqual({ 11: 'denied' });
    const asks = platform.deniedAsks;
    const second = await tree.look();
    expect(pids(second.alive)).toEqual([10, 12]);
    expect(judgmentsOf(second)).toEqual({});
    expect(platform.deniedAsks).toBe(asks); // known members and the remembered stranger: no new ask
  });
});
