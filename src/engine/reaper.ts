import type { Platform, ReapedChild, ReapResult } from '../platform/index.js';

// Zombies reaped in one event at most; more wait for the next, so that a
// flood of exiting orphans never holds up a stop signal.
const BATCH = 512;

/**
 * Reaps the zombies reparented to gsup (PID 1, subreaper), O(1) each, never
 * a child Node spawned (`nodeChildren`): libuv must get the command's status.
 */
export class Reaper {
  constructor(
    private readonly platform: Platform,
    private readonly nodeChildren: ReadonlySet<number>,
  ) {}

  /**
   * Reaps up to a batch; `more` when the batch was full, `nodeZombie` when a
   * child of Node's waits to be reaped (libuv may have missed its SIGCHLD).
   */
  reap(): { reaped: ReapedChild[]; more: boolean; nodeZombie: boolean } {
    const reaped: ReapedChild[] = [];
    const { platform } = this;
    if (!platform.reapOne) {
      if (platform.reapZombies) reaped.push(...platform.reapZombies(this.nodeChildren).reaped);
      return { reaped, more: false, nodeZombie: false };
    }
    while (reaped.length < BATCH) {
      const next = platform.reapOne(this.nodeChildren);
      if (next === 'none') return { reaped, more: false, nodeZombie: false };
      if (next === 'blocked') {
        // One of Node's is first in line: look past it, the slow way, this once.
        reaped.push(...(platform.reapZombies?.(this.nodeChildren).reaped ?? []));
        return { reaped, more: false, nodeZombie: true };
      }
      reaped.push(next);
    }
    return { reaped, more: true, nodeZombie: false };
  }

  /** At the end: a walk of every child, reaping what can be, counting zombies not yet reapable (threads still exiting). */
  sweep(): ReapResult {
    return this.platform.reapZombies?.(this.nodeChildren) ?? { reaped: [], notYet: 0 };
  }
}
