/**
 * The pids gsup reaped itself (its command, an orphan as PID 1). A reaped pid
 * is free at once, and a process that takes it in the same clock tick has the
 * same start time: pid and start time name a process only until gsup reaps
 * it. A look that began after the reap takes nothing by that pid for what it
 * knew; a look already under way when the reap came may have read either, so
 * the next one checks again. Only a pid a look has taken for a member, or
 * one reaped while a look is under way, needs it: the others are known by
 * nothing (as PID 1 between looks, an orphan churn of hours would otherwise
 * fill it).
 */
export class ReapedPids {
  /** Looks begun so far. */
  private looks = 0;
  /** A look is under way (one at a time). */
  private under = false;
  /**
   * pid → how many looks had begun when gsup reaped it. Emptied by a new Map, not by deletes: as PID 1 every
   * orphan's reap sets one and the next look's end drops it, and V8 gives a Map that fills and empties a new
   * table every few entries, in the old generation once the Map is there (only a full GC frees those).
   */
  private reaped = new Map<number, number>();

  /** gsup reaped this pid; `known`: a look took it for a member (or it is a run's command). */
  add(pid: number, known: boolean): void {
    if (known || this.under) this.reaped.set(pid, this.looks);
  }

  /** A look begins (before it lists the processes): its number. */
  begin(): number {
    this.under = true;
    return ++this.looks;
  }

  /** Whether `pid` was reaped before look `look` began: what that look sees by it is a new process. */
  gone(pid: number, look: number): boolean {
    const at = this.reaped.get(pid);
    return at !== undefined && at < look;
  }

  /** Look `look` is done: the reaps before it began are in what it knew from then on. */
  end(look: number): void {
    this.under = false;
    if (this.reaped.size === 0) return;
    let kept = 0;
    this.reaped.forEach((at) => at >= look && kept++);
    if (kept === this.reaped.size) return;
    const reaped = new Map<number, number>();
    if (kept > 0) this.reaped.forEach((at, pid) => at >= look && reaped.set(pid, at));
    this.reaped = reaped;
  }
}
