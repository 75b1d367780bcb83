import { afterEach, describe, expect, it, vi } from 'vitest';
import { MARK_VARIABLE, Provenance } from '../../../src/engine/tree/provenance.js';
import { ProcessTree, logTreeChanges } from '../../../src/engine/tree/tree.js';
import { Logger } from '../../../src/log.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

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
  it('the command, a leftover seen below it, and a marked orphan are; a `docker exec` orphan is not', async () => {
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
    platform.add({ pid: 23, ppid: GSUP }); // its environment cannot be read (another user's)
    const snapshot = await tree.look();
    expect(pids(snapshot.alive)).toEqual([11, 12]);
    expect(pids(snapshot.foreign ?? [])).toEqual([20, 22, 23]);
    const lines: string[] = [];
    logTreeChanges(new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) }), tree, snapshot);
    const said = "[gsup] pid 20 (cmd-20) is not the tree's: reparented to gsup without the mark of its runs";
    expect(lines).toContain(`${said}; reaped, never signalled`);
    // Each is read once: the next look knows them.
    const reads = platform.environReads;
    const next = await tree.look();
    expect(pids(next.alive)).toEqual([11, 12]);
    expect(next.foreign).toEqual([]);
    expect(platform.environReads).toBe(reads);
  });

  it('an unseen zombie is no member (it needs no verdict); a pid reused by a marked one is read anew', async () => {
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 30, ppid: GSUP, state: 'Z' });
    platform.add({ pid: 31, ppid: GSUP });
    expect((await tree.look()).members).toEqual([]);
    platform.add({ pid: 31, ppid: GSUP, startTime: 9000 });
    platform.environs.set(31, { [MARK_VARIABLE]: 'tok.2' });
    expect(pids((await tree.look()).alive)).toEqual([31]);
  });

  it('a read that does not answer is not waited for: no member meanwhile, nothing said; others read', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { platform, tree } = pid1Tree();
    platform.add({ pid: 40, ppid: GSUP });
    platform.stuckEnvirons.add(40);
    const look = tree.look();
    await vi.advanceTimersByTimeAsync(1000);
    const snapshot = await look;
    expect(snapshot.alive).toEqual([]);
    expect(snapshot.foreign).toEqual([]); // no verdict yet: nothing said
    platform.add({ pid: 41, ppid: GSUP });
    platform.environs.set(41, { [MARK_VARIABLE]: 'tok.1' });
    expect(pids((await tree.look()).alive)).toEqual([41]);
  });

  it('not PID 1 (subreaper): only the tree’s orphans come to gsup; each child is the tree’s, none read', async () => {
    const { platform, tree } = pid1Tree(false);
    platform.add({ pid: 50, ppid: GSUP });
    expect(pids((await tree.look()).alive)).toEqual([50]);
    expect(platform.environReads).toBe(0);
  });
});
