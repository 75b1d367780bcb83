import type { ProcessInfo } from '../../platform/index.js';
import { NAMED } from '../tree/command-lines.js';
import { formatDuration } from '../machine/format.js';
import { membersOf, processKey, restrictTargets, unreached, type Target } from '../tree/targets.js';
import type { Pm2Manager } from '../pm2/daemons.js';
import type { TreeSnapshot } from '../tree/tree.js';

/**
 * What one stop sequence knows of the processes: who has had the stop signal
 * (none gets it twice), who was seen alive, who had to be SIGKILLed; and its
 * summary line. (What the stop decides — its phase, the stop signals
 * received — is the machine's.)
 */
export class StopRecord {
  private readonly reached = new Set<string>();
  private readonly reachedGroups = new Set<number>();
  private readonly pm2Killed = new Set<number>();
  private readonly seen = new Set<string>();
  private readonly killed = new Map<string, ProcessInfo>();
  /** Sent SIGKILL and alive still when gsup gave up (uninterruptible sleep): not counted as killed. */
  private readonly survivors = new Map<string, ProcessInfo>();
  private readonly names = new Map<string, string>();

  constructor(readonly startedAt: number) {}

  saw(snapshot: TreeSnapshot): void {
    for (const info of snapshot.alive) this.seen.add(processKey(info));
  }

  /** The part of `targets` already sent the stop signal (a stop signal received again goes to them). */
  reachedOf(targets: Target[]): Target[] {
    const fresh = new Set(unreached(targets, this.reached).flatMap(membersOf).map(processKey));
    return restrictTargets(
      targets,
      new Set(
        targets
          .flatMap(membersOf)
          .filter((info) => !fresh.has(processKey(info)))
          .map((info) => info.pid),
      ),
    );
  }

  /**
   * The part of `targets` not sent the stop signal yet, now counted as sent.
   * A process that joined a reached group since (forked by a member: a
   * cleanup helper, a trap's `pm2 kill`) is its parent's while that lives.
   */
  take(targets: Target[], snapshot: TreeSnapshot): Target[] {
    const living = new Set(snapshot.alive.map((info) => info.pid));
    const fresh = unreached(targets, this.reached).filter(
      (target) => target.kind === 'group' || !this.reachedGroup(target.process, living),
    );
    for (const info of fresh.flatMap(membersOf)) {
      this.reached.add(processKey(info));
      this.reachedGroups.add(info.pgid);
    }
    return fresh;
  }

  /** In a group the stop signal reached, with its parent alive in the tree? */
  private reachedGroup(info: ProcessInfo, living: ReadonlySet<number>): boolean {
    return living.has(info.ppid) && this.reachedGroups.has(info.pgid);
  }

  /** The pm2 God daemons not yet stopped with `pm2 kill`; what they run counts as reached. */
  takePm2(managers: Pm2Manager[], managed: ReadonlySet<number>, snapshot: TreeSnapshot): Pm2Manager[] {
    const fresh = managers.filter((manager) => !this.pm2Killed.has(manager.info.pid));
    for (const manager of fresh) this.pm2Killed.add(manager.info.pid);
    if (fresh.length > 0)
      for (const info of snapshot.alive) if (managed.has(info.pid)) this.reached.add(processKey(info));
    return fresh;
  }

  /** These are being SIGKILLed: counted, and the oldest named (by the command lines read ahead, kept now). */
  killing(alive: ProcessInfo[], commandLine: (info: ProcessInfo) => string): void {
    for (const info of alive) {
      const key = processKey(info);
      this.seen.add(key);
      this.killed.set(key, info);
    }
    for (const info of this.oldestKilled().slice(0, NAMED)) {
      const key = processKey(info);
      if (!this.names.has(key)) this.names.set(key, commandLine(info));
    }
  }

  /** Alive after SIGKILL when gsup gives up: they are not "killed". */
  survived(alive: ProcessInfo[]): void {
    for (const info of alive) {
      const key = processKey(info);
      this.killed.delete(key);
      this.seen.add(key);
      this.survivors.set(key, info);
    }
  }

  /** Oldest first (the command before what it forked): pids wrap around, start times do not. */
  private oldestKilled(): ProcessInfo[] {
    return [...this.killed.values()].sort((a, b) => a.startTime - b.startTime || a.pid - b.pid);
  }

  get anyKilled(): boolean {
    return this.killed.size > 0 || this.survivors.size > 0;
  }

  /** The one summary line: how long, how many exited by themselves, which were killed (oldest first, ten named). */
  summary(now: number): { message: string; fields: Record<string, unknown> } {
    const durationMs = now - this.startedAt;
    const killed = this.oldestKilled().map((info) => ({ pid: info.pid, command: this.names.get(processKey(info)) }));
    const exited = [...this.seen].filter((key) => !this.killed.has(key) && !this.survivors.has(key)).length;
    const shown = killed.slice(0, NAMED).map(({ pid, command }) => (command ? `${pid} (${command})` : `${pid}`));
    if (killed.length > shown.length) shown.push(`and ${killed.length - shown.length} more`);
    const survived = [...this.survivors.values()].map((info) => info.pid);
    return {
      message:
        `stopped in ${formatDuration(durationMs)}: ${exited} exited by themselves, ${killed.length} killed` +
        (killed.length > 0 ? `: ${shown.join(', ')}` : '') +
        (survived.length > 0 ? `; ${survived.length} still alive after SIGKILL: ${survived.join(', ')}` : ''),
      fields: { durationMs, exited, killed, ...(survived.length > 0 && { survived }) },
    };
  }
}
