import type { Logger } from '../../output/log.js';
import type { Platform, ReapedChild } from '../../platform/index.js';
import { signalName } from '../../platform/signals.js';
import { describeExit } from '../machine/format.js';
import type { CommandExit } from '../machine/values.js';

// Zombies reaped in one event at most; more wait for the next, so that a
// flood of exiting orphans never holds up a stop signal.
const BATCH = 512;

/** The children the reaper leaves alone: libuv reaps them. */
export type Kept = Pick<ReadonlySet<number>, 'has' | 'size'>;

/**
 * Reaps the zombies reparented to gsup (PID 1, subreaper), O(1) each, never
 * a child Node spawned (`nodeChildren`): libuv must get the command's status.
 * A child gsup spawned itself (`spawnedHere`) is reaped here, its status told
 * to its spawn.
 */
export class Reaper {
  constructor(
    private readonly platform: Platform,
    private readonly nodeChildren: Kept,
    private readonly logger: Logger,
    /** Told of each death reaped (deaths.ts explains a SIGKILL gsup did not send). */
    private readonly died?: (pid: number, exit: CommandExit) => void,
    /** Whether a child just reaped was none of the tree's (a stranger, gsup's own from before its first spawn). */
    private readonly apart?: (pid: number) => boolean,
    private readonly spawnedHere: Map<number, (exit: CommandExit) => void> = new Map(),
  ) {}

  /**
   * Reaps up to a batch; `more` when the batch was full, `nodeZombie` when a
   * child of Node's waits to be reaped (libuv may have missed its SIGCHLD).
   */
  reap(): { reaped: CommandExit[]; more: boolean; nodeZombie: boolean } {
    const { reaped, more, nodeZombie } = this.reapBatch();
    return { reaped: this.exits(reaped), more, nodeZombie };
  }

  private reapBatch(): { reaped: ReapedChild[]; more: boolean; nodeZombie: boolean } {
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

  /**
   * At the end: a walk of every child, reaping what can be, counting zombies not yet reapable
   * (threads still exiting).
   */
  sweep(): { reaped: CommandExit[]; notYet: number } {
    const { reaped, notYet } = this.platform.reapZombies?.(this.nodeChildren) ?? { reaped: [], notYet: 0 };
    return { reaped: this.exits(reaped), notYet };
  }

  /** The statuses of the tree's among these: what is none of the tree's is reaped, its status no one's. */
  private exits(reaped: readonly ReapedChild[]): CommandExit[] {
    const exits: CommandExit[] = [];
    for (const child of reaped) {
      const spawn = this.spawnedHere.get(child.pid);
      if (spawn) {
        // The command's status, as libuv would have told it (its death is its run's, not an orphan's).
        this.spawnedHere.delete(child.pid);
        spawn(exitOf(child));
        continue;
      }
      const apart = this.apart?.(child.pid) ?? false;
      const exit = this.noted(child, apart);
      if (!apart) exits.push(exit);
    }
    return exits;
  }

  /** Logged at -v; its status as the command's would be. */
  private noted(child: ReapedChild, apart: boolean): CommandExit {
    const exit = exitOf(child);
    if (this.logger.enabled('info'))
      this.logger.info('reaped', `reaped pid ${child.pid} (${describeExit(exit)}${apart ? ", not the tree's" : ''})`, {
        pid: child.pid,
        code: exit.code,
        signal: exit.signal,
        signo: exit.signo,
      });
    this.died?.(child.pid, exit);
    return exit;
  }
}

function exitOf(child: ReapedChild): CommandExit {
  if (child.signal === null) return { code: child.code, signal: null };
  const name = signalName(child.signal);
  return name ? { code: null, signal: name } : { code: null, signal: null, signo: child.signal };
}
