import type { ProcessInfo } from '../../platform/index.js';
import { processKey } from '../machine/ledger.js';
import type { CommandLines } from '../tree/command-lines.js';

/**
 * Wrappers that relay SIGINT/SIGTERM to their child themselves. tsx does, and
 * skips the relay only when its child tells it (over IPC, within 30 ms of
 * tsx's own handler) that it got the signal too: a race that a busy machine
 * loses, and the child gets the signal twice. Which processes are relayers
 * is told here, by their command lines; what a stop does with them is the
 * ledger's (machine/ledger.ts: left out while their child has the signal).
 */
const RELAYERS: RegExp[] = [
  // node …/node_modules/.bin/tsx, node …/tsx/dist/cli.mjs, a global tsx (tsx watch too)
  /^\S*node\S*\s+(\S*\/)?(tsx|tsx\/dist\/cli\.mjs)(\s|$)/,
];

export class Relayers {
  constructor(private readonly lines: CommandLines) {}

  /** The relayers among these processes, by the command lines read ahead in the look (one not read yet is none). */
  find(processes: readonly ProcessInfo[]): ProcessInfo[] {
    return processes.filter((info) => {
      // tsx runs in node: only a process named so (or unnamed, where the platform cannot tell) is worth reading.
      if (info.name !== '' && !info.name.startsWith('node')) return false;
      const commandLine = this.lines.of(info);
      return commandLine !== undefined && RELAYERS.some((pattern) => pattern.test(commandLine));
    });
  }

  /** The same, as the identities a stop round's route carries (processKey). */
  keys(processes: readonly ProcessInfo[]): Set<string> {
    return new Set(this.find(processes).map(processKey));
  }
}
