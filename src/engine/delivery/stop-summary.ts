import type { ProcessInfo } from '../../platform/index.js';
import { NAMED } from '../tree/command-lines.js';
import { formatDuration } from '../machine/format.js';
import { processKey } from '../machine/ledger.js';
import type { TreeSnapshot } from '../tree/tree.js';

/**
 * What one stop sequence saw of the processes, for its summary line: who was
 * seen alive, who had to be SIGKILLed, who outlived SIGKILL. (Who has had the
 * stop signal — none gets it twice — is the machine's ledger: machine/ledger.ts.)
 */
export class StopSummary {
  private readonly seen = new Set<string>();
  private readonly killed = new Map<string, ProcessInfo>();
  /** Sent SIGKILL and alive still when gsup gave up (uninterruptible sleep): not counted as killed. */
  private readonly survivors = new Map<string, ProcessInfo>();
  private readonly names = new Map<string, string>();

  constructor(readonly startedAt: number) {}

  saw(snapshot: TreeSnapshot): void {
    for (const info of snapshot.alive) this.seen.add(processKey(info));
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
  line(now: number): { message: string; fields: Record<string, unknown> } {
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
