import type { Platform, ProcessInfo, SignalName } from '../platform/index.js';
import { STOP_SIGNALS } from '../signals.js';

/**
 * Wrappers that relay SIGINT/SIGTERM to their child themselves. tsx does, and
 * skips the relay only when its child tells it (over IPC, within 30 ms) that
 * it got the signal too; a child's word that arrives before tsx's own handler
 * has run is lost, and the child gets the signal twice. That happens when a
 * group signal wakes a whole chain at once on a busy machine. So a relayer
 * gets the stop signal first; once its handler has run, the others get it.
 */
const RELAYERS: RegExp[] = [
  // node …/node_modules/.bin/tsx, node …/tsx/dist/cli.mjs, a global tsx
  /^\S*node\S*\s+(\S*\/)?(tsx|tsx\/dist\/cli\.mjs)(\s|$)/,
];

// How long a relayer gets to run its signal handler before the others are signalled anyway.
const HANDLER_WAIT_MS = 100;
// Once the kernel has delivered the signal (its pending bit cleared), tsx's JavaScript handler
// runs at its loop's next turn: the others wait this much longer, well inside tsx's 30 ms window.
const HANDLER_TURN_MS = 15;

export class Relayers {
  private readonly verdicts = new Map<string, boolean>();

  constructor(private readonly platform: Platform) {}

  /** The relayers among these processes (a command line is read once per process and exec). */
  find(processes: ProcessInfo[], signal: SignalName): ProcessInfo[] {
    if (!STOP_SIGNALS.has(signal) || !this.platform.signalPending) return [];
    const found: ProcessInfo[] = [];
    const seen = new Set<string>();
    for (const info of processes) {
      // tsx runs in node: only a process named so (or unnamed, where the platform cannot tell) is worth reading.
      if (info.name !== '' && !info.name.startsWith('node')) continue;
      const key = `${info.pid}:${info.startTime}:${info.name}`;
      seen.add(key);
      let verdict = this.verdicts.get(key);
      if (verdict === undefined) {
        const commandLine = this.platform.commandLine(info.pid);
        verdict = RELAYERS.some((pattern) => pattern.test(commandLine));
        this.verdicts.set(key, verdict);
      }
      if (verdict) found.push(info);
    }
    for (const key of this.verdicts.keys()) if (!seen.has(key)) this.verdicts.delete(key);
    return found;
  }

  /** Signals the relayers, and waits (bounded) until each has run its handler. */
  async signalFirst(relayers: ProcessInfo[], signal: SignalName): Promise<void> {
    this.platform.signalProcesses(relayers, signal);
    const deadline = Date.now() + HANDLER_WAIT_MS;
    while (relayers.some((info) => this.platform.signalPending!(info.pid, signal)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await new Promise((resolve) => setTimeout(resolve, HANDLER_TURN_MS));
  }
}
