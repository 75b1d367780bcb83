import { basename } from 'node:path';
import type { ProcessInfo } from '../../platform/index.js';
import { processKey } from '../machine/ledger/ledger.js';
import { programWords } from '../pm2/claims.js';
import type { CommandLines } from '../tree/command-lines.js';

/**
 * Wrappers that relay SIGINT/SIGTERM to their child themselves: tsx (which
 * skips the relay only when its child tells it, over IPC within 30 ms of
 * tsx's own handler, that it got the signal too: a race that a busy machine
 * loses), Node's own watch mode (`node --watch`, `--watch-path`) and nodemon
 * (which sends its child SIGTERM, then SIGINT, on its own). The watchers stay
 * after their child (they wait for a change). Which processes are relayers is
 * told here, by their command lines; what a stop does with them is the
 * ledger's (machine/ledger/ledger.ts: left out while their child has the signal,
 * sent it alone once it is gone).
 */
export function isRelayer(commandLine: string): boolean {
  const { node, options, program } = programWords(commandLine);
  // Each of them runs in node: `node …/.bin/tsx`, `node --max-old-space-size=512 …/tsx/dist/cli.mjs`, a global one.
  if (!node) return false;
  if (options.some((option) => option === '--watch' || option.startsWith('--watch-path'))) return true;
  const name = basename(program);
  return (
    name === 'tsx' ||
    program.endsWith('tsx/dist/cli.mjs') ||
    name === 'nodemon' ||
    program.endsWith('nodemon/bin/nodemon.js')
  );
}

export class Relayers {
  constructor(private readonly lines: CommandLines) {}

  /** The relayers among these processes, by the command lines read ahead in the look (one not read yet is none). */
  find(processes: readonly ProcessInfo[]): ProcessInfo[] {
    return processes.filter((info) => {
      // They run in node: only a process named so (or unnamed, where the platform cannot tell) is worth reading.
      if (info.name !== '' && !info.name.startsWith('node')) return false;
      const commandLine = this.lines.of(info);
      return commandLine !== undefined && isRelayer(commandLine);
    });
  }

  /** The same, as the identities a stop round's route carries (processKey). */
  keys(processes: readonly ProcessInfo[]): Set<string> {
    return new Set(this.find(processes).map(processKey));
  }
}
