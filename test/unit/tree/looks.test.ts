import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Looks } from '../../../src/engine/tree/looks.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Snapshot } from '../../../src/engine/machine/values.js';

// When the tree is looked at: on request, one look at a time, spaced by what a look costs. A fake
// clock, and a fake process table whose every look takes `cost` ms of it.

const GSUP = process.pid;
const advance = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

let controller: AbortController;
beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance', 'hrtime'],
  });
  controller = new AbortController();
});
afterEach(() => {
  controller.abort();
  vi.useRealTimers();
});

function scheduler({ cost = 0 } = {}) {
  const platform = new FakePlatform();
  platform.add({ pid: GSUP, ppid: 1 });
  const list = platform.listProcesses.bind(platform);
  const seen = { looks: 0, atOnce: 0, most: 0, startedAt: [] as number[], failNext: false };
  platform.listProcesses = async () => {
    seen.looks++;
    seen.startedAt.push(performance.now());
    seen.most = Math.max(seen.most, ++seen.atOnce);
    await new Promise((resolve) => setTimeout(resolve, cost));
    seen.atOnce--;
    if (seen.failNext) {
      seen.failNext = false;
      throw new Error('proc went away');
    }
    return list();
  };
  const done: Snapshot[] = [];
  const failed: unknown[] = [];
  const looks = new Looks(
    new ProcessTree(platform, GSUP),
    (snapshot) => done.push(snapshot),
    (error) => failed.push(error),
    controller.signal,
  );
  return { looks, seen, done, failed };
}

describe('Looks', () => {
  it('a request is a look on the next turn of the loop, not a timer’s millisecond; requests meanwhile merge', async () => {
    const { looks, seen, done } = scheduler();
    looks.take();
    looks.take();
    looks.take(500);
    expect(seen.looks).toBe(0);
    await advance(0);
    expect(seen.looks).toBe(1);
    await advance(1000);
    expect(seen.looks).toBe(1);
    expect(done).toHaveLength(1);
    expect(looks.last).toBe(done[0]);
  });

  it('never two looks at once: requests during a look become one look after it, twice its cost after its end', async () => {
    const { looks, seen, done } = scheduler({ cost: 100 });
    const start = performance.now();
    looks.take();
    await advance(10);
    expect(seen.looks).toBe(1);
    looks.take();
    looks.take();
    await advance(90); // the first look ends (at 100): the next is due at 100 + 2 × 100
    expect(done).toHaveLength(1);
    await advance(199);
    expect(seen.looks).toBe(1);
    await advance(1);
    expect(seen.looks).toBe(2);
    await advance(1000);
    expect(seen.startedAt.map((at) => at - start)).toEqual([0, 300]);
    expect(seen.most).toBe(1);
    expect(done).toHaveLength(2);
  });

  it('a delayed request: an earlier one moves it sooner, a later one never postpones it', async () => {
    const { looks, seen } = scheduler();
    const start = performance.now();
    looks.take(1000);
    await advance(100);
    looks.take(50);
    looks.take(5000);
    await advance(2000);
    looks.take(300);
    looks.take(600);
    await advance(10_000);
    expect(seen.startedAt.map((at) => at - start)).toEqual([150, 2400]);
  });

  it('fresh: the newest look is as old as its start', async () => {
    const { looks } = scheduler({ cost: 100 });
    expect(looks.fresh(1_000_000)).toBe(false);
    looks.take();
    await advance(100);
    await advance(50);
    expect(looks.fresh(150)).toBe(true);
    expect(looks.fresh(149)).toBe(false);
  });

  it('a look that fails is told, and the next request looks again', async () => {
    const { looks, seen, done, failed } = scheduler();
    seen.failNext = true;
    looks.take();
    await advance(10);
    expect(failed).toHaveLength(1);
    expect(done).toHaveLength(0);
    looks.take();
    await advance(10);
    expect(done).toHaveLength(1);
  });

  it('abort: a pending look is cancelled, one under way is not handed over, and no request is taken after', async () => {
    const pending = scheduler();
    pending.looks.take(100);
    controller.abort();
    await advance(1000);
    expect(pending.seen.looks).toBe(0);

    controller = new AbortController();
    const running = scheduler({ cost: 100 });
    running.looks.take();
    await advance(10);
    controller.abort();
    running.looks.take();
    await advance(1000);
    expect(running.seen.looks).toBe(1);
    expect(running.done).toHaveLength(0);
  });
});
