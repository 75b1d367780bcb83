import type { ProcessInfo, SignalName } from '../../platform/index.js';
import type { CommandLines } from '../tree/command-lines.js';
import { STOP_SIGNALS } from '../../signals.js';

/**
 * Wrappers that relay SIGINT/SIGTERM to their child themselves. tsx does, and
 * skips the relay only when its child tells it (over IPC, within 30 ms of
 * tsx's own handler) that it got the signal too: a race that a busy machine
 * loses, and the child gets the signal twice. So a relayer whose child gets
 * the signal from gsup gets none itself: the child gets it once, and tsx,
 * never signalled, has nothing to relay (it exits when its child does).
 */
const RELAYERS: RegExp[] = [
  // node …/node_modules/.bin/tsx, node …/tsx/dist/cli.mjs, a global tsx
  /^\S*node\S*\s+(\S*\/)?(tsx|tsx\/dist\/cli\.mjs)(\s|$)/,
];

export class Relayers {
  constructor(private readonly lines: CommandLines) {}

  /** The relayers among these processes that a stop signal must skip: those whose child is among them too. */
  toSkip(processes: readonly ProcessInfo[], signal: SignalName): ProcessInfo[] {
    if (!STOP_SIGNALS.has(signal)) return [];
    const parents = new Set(processes.map((info) => info.ppid));
    return this.find(processes).filter((info) => parents.has(info.pid));
  }

  /** The relayers among these processes, by the command lines read ahead in the look (one not read yet is none). */
  find(processes: readonly ProcessInfo[]): ProcessInfo[] {
    return processes.filter((info) => {
      // tsx runs in node: only a process named so (or unnamed, where the platform cannot tell) is worth reading.
      if (info.name !== '' && !info.name.startsWith('node')) return false;
      const commandLine = this.lines.of(info);
      return commandLine !== undefined && RELAYERS.some((pattern) => pattern.test(commandLine));
    });
  }
}
