import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TimerName } from '../../../src/engine/machine/step.js';
import { Timers } from '../../../src/engine/shell/timers.js';

// The timers of one supervision, by name, on a fake clock.

let fired: Array<[TimerName, number]>;
let timers: Timers;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  fired = [];
  timers = new Timers((name) => fired.push([name, Date.now()]));
});
afterEach(() => {
  timers.abort();
  vi.useRealTimers();
});

describe('Timers', () => {
  it('each fires once, by its name, when its time comes; a time below zero is now', async () => {
    const start = Date.now();
    timers.set('kill-timeout', 1000);
    timers.set('check', 20);
    timers.set('finish', -5);
    await vi.advanceTimersByTimeAsync(5000);
    expect(fired.map(([name, at]) => [name, at - start])).toEqual([
      ['finish', 0],
      ['check', 20],
      ['kill-timeout', 1000],
    ]);
  });

  it('once it fired or was cleared, ensure sets it again', async () => {
    const start = Date.now();
    timers.ensure('check', 10);
    await vi.advanceTimersByTimeAsync(20);
    timers.ensure('check', 10);
    timers.clear('check');
    timers.ensure('check', 50);
    await vi.advanceTimersByTimeAsync(100);
    expect(fired.map(([name, at]) => [name, at - start])).toEqual([
      ['check', 10],
      ['check', 70],
    ]);
  });

  it('set again, it is replaced (it fires once, at the new time); ensure leaves a running one as it is', async () => {
    const start = Date.now();
    timers.set('restart-delay', 100);
    timers.set('restart-delay', 300);
    timers.ensure('restart-delay', 50);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired.map(([name, at]) => [name, at - start])).toEqual([['restart-delay', 300]]);
    timers.ensure('restart-delay', 50); // fired, so no longer running: set anew
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toHaveLength(2);
  });

  it('clear cancels one; abort cancels all, for good, and says so on its signal', async () => {
    timers.set('health', 100);
    timers.set('stop-delay', 100);
    timers.clear('health');
    timers.clear('ready-timeout'); // not set: nothing happens
    await vi.advanceTimersByTimeAsync(200);
    expect(fired.map(([name]) => name)).toEqual(['stop-delay']);
    timers.set('check', 100);
    expect(timers.signal.aborted).toBe(false);
    timers.abort();
    expect(timers.signal.aborted).toBe(true);
    timers.set('kill-timeout', 10);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired.map(([name]) => name)).toEqual(['stop-delay']);
    expect(vi.getTimerCount()).toBe(0);
  });
});
