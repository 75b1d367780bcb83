import type { Logger } from '../../output/log.js';
import { isAlive, type Platform, type ProcessInfo } from '../../platform/index.js';
import { Reaper } from './reaper.js';
import type { CommandRun } from './run.js';
import type { CommandExit } from '../machine/values.js';

// The helpers whose lives are remembered (the newest).
const HELPER_LIVES_KEPT = 8;

/**
 * The children started without libuv (posix_spawn) in this process, by pid: whichever supervision reaps one (two
 * `supervise()` at once reap each other's: waitid takes any zombie) tells its own spawn.
 */
const SPAWNED_HERE = new Map<number, (exit: CommandExit) => void>();

/**
 * gsup's own children: those Node spawned (the command, probes, `pm2 kill`),
 * which libuv reaps, and the orphans reparented to gsup (PID 1, subreaper),
 * which gsup reaps, O(1) each; and whether any of the tree is left.
 */
export class Children {
  /**
   * gsup's own children: the command (each run), probes, helpers. libuv reaps them, gsup never does, but for
   * those in `spawnedHere`.
   */
  readonly nodeChildren = new Set<number>();
  /** Children gsup started without libuv (posix_spawn): reaped here, their status told (SPAWNED_HERE). */
  private readonly spawnedHere = SPAWNED_HERE;
  /** gsup's own helper processes (`pm2 kill`): part of the tree a stop waits for, never sent the stop signal. */
  readonly helpers = new Set<number>();
  /** Whether zombies reparented to gsup are reaped here (PID 1 or subreaper). */
  reaping = false;
  private readonly reaper: Reaper;
  /** When each recent helper lived, in start-time units (`until` is Infinity while it lives). */
  private readonly helperLives = new Map<number, { from: number; until: number }>();

  constructor(
    private readonly platform: Platform,
    logger: Logger,
    died?: (pid: number, exit: CommandExit) => void,
    apart?: (pid: number) => boolean,
  ) {
    const { nodeChildren, spawnedHere } = this;
    // What the reaper leaves to libuv: Node's children less gsup's own spawns (a few at most: the runs).
    const keep = {
      get size() {
        let own = 0;
        for (const pid of spawnedHere.keys()) if (nodeChildren.has(pid)) own++;
        return nodeChildren.size - own;
      },
      has: (pid: number) => nodeChildren.has(pid) && !spawnedHere.has(pid),
    };
    this.reaper = new Reaper(platform, keep, logger, died, apart, spawnedHere);
  }

  /**
   * A child gsup started itself (posix_spawn): reaped here (only ever while gsup reaps: PID 1, subreaper),
   * `reaped` told its status at the moment it is.
   */
  reapHere(pid: number, reaped: (exit: CommandExit) => void): void {
    this.spawnedHere.set(pid, reaped);
  }

  /**
   * Reaps a batch: `more` when the batch was full, `nodeZombie` when a child of Node's waits (libuv
   * may have missed its SIGCHLD).
   */
  reap(): { reaped: CommandExit[]; more: boolean; nodeZombie: boolean } {
    if (!this.reaping) return { reaped: [], more: false, nodeZombie: false };
    return this.reaper.reap();
  }

  /** The last reap before the exit: a walk past Node's own, and how many zombies cannot be reaped yet. */
  sweep(): { reaped: CommandExit[]; notYet: number } {
    if (!this.reaping) return { reaped: [], notYet: 0 };
    const first = this.reaper.reap().reaped;
    const { reaped, notYet } = this.reaper.sweep();
    return { reaped: [...first, ...reaped], notYet };
  }

  /**
   * As PID 1 or subreaper (set before the spawn), every process of the tree
   * descends from gsup: orphans come to it. So once gsup has no child left
   * and no pm2 daemon was adopted from elsewhere, nothing of the tree is
   * alive — known with no look at the tree, however large it was.
   */
  treeGone(adoptedFromElsewhere: boolean): boolean {
    if (!this.reaping || adoptedFromElsewhere) return false;
    const any = this.platform.hasChildren?.() ?? this.platform.ownChildren?.()?.length;
    return any !== undefined && !any;
  }

  /**
   * Is the command a zombie libuv has not been told of? A full signal pipe
   * drops SIGCHLD like any signal; a SIGCHLD of our own makes libuv look again.
   */
  async nudgeIfLost(run: CommandRun): Promise<boolean> {
    if (run.exit || run.pid === undefined) return false;
    const gone = !isAlive(await this.platform.processInfo(run.pid));
    if (gone) this.platform.kill(process.pid, 'SIGCHLD');
    return gone;
  }

  /** A helper process of gsup's own (`pm2 kill`): part of the tree a stop waits for, never sent the stop signal. */
  spawnHelper(spawn: () => number | undefined): void {
    const from = this.platform.startTimeNow();
    const pid = spawn();
    if (pid === undefined) return;
    this.nodeChildren.add(pid);
    this.helpers.add(pid);
    this.helperLives.set(pid, { from, until: Infinity });
    for (const old of this.helperLives.keys())
      if (this.helperLives.size > HELPER_LIVES_KEPT) this.helperLives.delete(old);
  }

  helperExited(pid: number): void {
    this.nodeChildren.delete(pid);
    this.helpers.delete(pid);
    const life = this.helperLives.get(pid);
    if (life) life.until = this.platform.startTimeNow();
  }

  /**
   * Was this one of gsup's helpers (its pid, started within the helper's
   * life)? A look taken before a helper's exit may be read after it: the
   * stop's summary counts the tree's processes, not gsup's own.
   */
  wasHelper(info: ProcessInfo): boolean {
    const life = this.helperLives.get(info.pid);
    return life !== undefined && info.startTime >= life.from - 1 && info.startTime <= life.until;
  }
}
