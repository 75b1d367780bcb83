import type { ProcessInfo } from '../../platform/index.js';
import type { Judgment } from '../machine/values.js';

/** One of gsup's own processes from before its first spawn: its start time, the child of gsup it descends from. */
interface Own {
  readonly startTime: number;
  /** The child of gsup from before its first spawn it descends from (itself, for such a child). */
  readonly from: number;
  said: boolean;
}

/**
 * gsup's own children that exist before its first spawn (a child a preload in `NODE_OPTIONS` started in gsup's
 * first image), and what they start: never the tree's, as PID 1 or subreaper. A descendant a look saw below one of
 * them stays gsup's own wherever it is reparented (to gsup, once its parent is gone); one no look saw is judged by
 * its provenance, as PID 1 judges every orphan: `had` says gsup must, also as subreaper.
 */
export class OwnBefore {
  private readonly own = new Map<number, Own>();
  /** Whether gsup had children before its first spawn: then what they start may come to gsup unseen. */
  had = false;

  /** A child of gsup from before its first spawn. */
  note(info: ProcessInfo): void {
    this.own.set(info.pid, { startTime: info.startTime, from: info.pid, said: false });
    this.had = true;
  }

  /** This very process (same start time) is gsup's own. */
  owns(info: ProcessInfo): boolean {
    return this.own.get(info.pid)?.startTime === info.startTime;
  }

  /** Each look: those gone forgotten, and what the others started since (their children, all the way down). */
  follow(children: ReadonlyMap<number, ProcessInfo[]>, byPid: ReadonlyMap<number, ProcessInfo>): void {
    if (this.own.size === 0) return;
    for (const [pid, own] of this.own) if (byPid.get(pid)?.startTime !== own.startTime) this.own.delete(pid);
    const queue = [...this.own.keys()];
    while (queue.length > 0) {
      const pid = queue.pop()!;
      const from = this.own.get(pid)!.from;
      for (const child of children.get(pid) ?? []) {
        if (this.owns(child)) continue;
        this.own.set(child.pid, { startTime: child.startTime, from, said: false });
        queue.push(child.pid);
      }
    }
  }

  /** Of these children of gsup, those its own, each said once (at -v). */
  judge(children: readonly ProcessInfo[]): Judgment[] {
    const judgments: Judgment[] = [];
    for (const info of children) {
      const own = this.own.get(info.pid);
      if (own?.startTime !== info.startTime || own.said) continue;
      own.said = true;
      const detail = own.from === info.pid ? undefined : `pid ${own.from}`;
      judgments.push({ info, ours: false, why: 'own', ...(detail && { detail }) });
    }
    return judgments;
  }

  /** Reaped by gsup: true when it was its own (its status is not the tree's). */
  reaped(pid: number): boolean {
    return this.own.delete(pid);
  }
}
