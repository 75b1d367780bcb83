import { describe, expect, it } from 'vitest';
import { ReapedPids } from '../../../src/engine/tree/reaped.js';

// Which reaped pids the next looks must not take for what they knew, and which are kept at all.

describe('ReapedPids', () => {
  it('a known pid reaped between looks: gone for the next look, forgotten after it', () => {
    const reaped = new ReapedPids();
    reaped.end(reaped.begin());
    reaped.add(300, true);
    const look = reaped.begin();
    expect(reaped.gone(300, look)).toBe(true);
    reaped.end(look);
    expect(reaped.gone(300, reaped.begin())).toBe(false);
  });

  it('reaped while a look is under way (known or not): not for that look, gone for the next', () => {
    const reaped = new ReapedPids();
    const first = reaped.begin();
    reaped.add(300, false);
    expect(reaped.gone(300, first)).toBe(false);
    reaped.end(first);
    const second = reaped.begin();
    expect(reaped.gone(300, second)).toBe(true);
  });

  it('a pid no look took for a member, reaped between looks, is not kept (hours of orphans between looks)', () => {
    const reaped = new ReapedPids();
    reaped.end(reaped.begin());
    for (let pid = 1000; pid < 101_000; pid++) reaped.add(pid, false);
    const look = reaped.begin();
    expect(reaped.gone(1000, look)).toBe(false);
    expect(reaped.gone(100_999, look)).toBe(false);
  });
});
