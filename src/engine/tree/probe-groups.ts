import type { Platform, ProcessInfo } from '../../platform/index.js';

// A reaped probe is forgotten this long after (start-time units: ticks on Linux, ms elsewhere) though no look saw its
// group empty: what it left in its group was SIGKILLed when it was reaped. (The map stays small without looks.)
const FORGET_PROBES_AFTER = 60_000;

/**
 * gsup's own probes (health commands), each the leader of its group, by
 * pid: when it was reaped (Infinity while it runs), in start-time units. It
 * and its group are no part of the tree.
 */
export class ProbeGroups {
  private readonly probes = new Map<number, { reapedAt: number }>();

  constructor(private readonly platform: Platform) {}

  /** A probe spawned (Node's child). No look may be needed to forget it: pids wrap, and a run takes no look. */
  ignore(pid: number): void {
    const now = this.platform.startTimeNow();
    for (const [probe, { reapedAt }] of this.probes)
      if (now - reapedAt > FORGET_PROBES_AFTER) this.probes.delete(probe);
    this.probes.set(pid, { reapedAt: Infinity });
  }

  /**
   * The probe was reaped (its pid is free from now on): only what started
   * before this, it or what it left in its group, is the probe's; a later
   * process with that pid or group id (after the pid counter went round:
   * the restarted command itself) is not.
   */
  reaped(pid: number): void {
    const probe = this.probes.get(pid);
    if (probe) probe.reapedAt = this.platform.startTimeNow();
  }

  /** Is this pid a probe Node has not reaped yet? */
  running(pid: number): boolean {
    return this.probes.get(pid)?.reapedAt === Infinity;
  }

  /** A look: a probe reaped, with nothing left in its group, is forgotten. */
  forgetGone(byPid: ReadonlyMap<number, ProcessInfo>, groups: ReadonlyMap<number, ProcessInfo[]>): void {
    for (const [pid, { reapedAt }] of this.probes) {
      if (reapedAt !== Infinity && !byPid.has(pid) && !groups.has(pid)) this.probes.delete(pid);
    }
  }

  /**
   * The probe's own process, or one it left in its group? While Node has not
   * reaped the probe, its pid and its group id are certainly its own. Once
   * reaped (Node says so in the very callback that reaps it), a process with
   * its pid is a later one (the pid counter went round), and so is the group
   * that one leads: the kernel hands out no pid still in use as a group id,
   * so the probe's group was empty by then. What is left in the probe's group
   * with no new leader is the probe's if it started before the reap.
   */
  owns(info: ProcessInfo, byPid: ReadonlyMap<number, ProcessInfo>): boolean {
    const group = this.probes.get(info.pgid);
    if (group && group.reapedAt === Infinity) return true;
    if (this.running(info.pid)) return true;
    if (!group || byPid.has(info.pgid)) return false;
    return info.startTime <= group.reapedAt;
  }
}
