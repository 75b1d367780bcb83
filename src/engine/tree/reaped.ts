/**
 * The pids gsup reaped itself (its command, an orphan as PID 1). A reaped pid
 * is free at once, and a process that takes it in the same clock tick has the
 * same start time: pid and start time name a process only until gsup reaps
 * it. A look that began after the reap takes nothing by that pid for what it
 * knew; a look already under way when the reap came may have read either, so
 * the next one checks again.
 */
export class ReapedPids {
  /** Looks begun so far. */
  private looks = 0;
  /**
   * pid → how many looks had begun when gsup reaped it. Emptied by a new Map, not by deletes: as PID 1 every
   * orphan's reap sets one and the next look's end drops it, and V8 gives a Map that fills and empties a new
   * table every few entries, in the old generation once the Map is there (only a full GC frees those).
   */
  private reaped = new Map<number, number>();

  /** gsup reaped this pid. */
  add(pid: number): void {
    this.reaped.set(pid, this.looks);
  }

  /** A look begins (before it lists the processes): its number. */
  begin(): number {
    return ++this.looks;
  }

  /** Whether `pid` was reaped before look `look` began: what that look sees by it is a new process. */
  gone(pid: number, look: number): boolean {
    const at = this.reaped.get(pid);
    return at !== undefined && at < look;
  }

  /** Look `look` is done: the reaps before it began are in what it knew from then on. */
  end(look: number): void {
    if (this.reaped.size === 0) return;
    let kept = 0;
    this.reaped.forEach((at) => at >= look && kept++);
    if (kept === this.reaped.size) return;
    const reaped = new Map<number, number>();
    if (kept > 0) this.reaped.forEach((at, pid) => at >= look && reaped.set(pid, at));
    this.reaped = reaped;
  }
}
