import { basename } from 'node:path';
import type { ProcessInfo } from '../../platform/index.js';

// What a command line says it runs of pm2. A claim, never a proof: it
// decides routing (a manager gets signals alone); `pm2 kill` needs more
// (proof.ts).

/**
 * A process that runs pm2's God: the daemon `pm2 start` leaves behind, or a
 * `pm2-runtime` in the foreground. It and its apps share a process group; a
 * signal to that group reaches each app twice (from the kernel, then from
 * pm2), and pm2 restarts an app signalled behind its back. So signals go to
 * the manager alone, and a stop of a daemon goes through `pm2 kill`.
 */
export interface Pm2Manager {
  info: ProcessInfo;
  kind: 'daemon' | 'runtime';
  /** gsup's own PM2_HOME, where the daemon was proven to be gsup's. */
  home: string;
}

/** pm2's title for its God daemon (lib/Daemon.js), with the PM2_HOME it says it serves. */
const GOD_TITLE = /^PM2 v[\w.-]+: God Daemon \((.*)\)$/;
// node, nodejs, node20, node20.11 (not nodemon): the interpreter, whose script is the program.
const NODE = /^node(js)?(\d[\d.]*)?$/;
const RUNTIMES = new Set(['pm2-runtime', 'pm2-docker']);

/**
 * The program a command line runs, by its base name: the script of
 * `node [options] script …`, else the executable itself. Words are split at
 * spaces (a path with one is not recognised: never wrongly).
 */
export function programOf(commandLine: string): string {
  const words = commandLine.split(' ');
  let index = 0;
  if (NODE.test(basename(words[0]))) {
    index = 1;
    while (index < words.length && words[index].startsWith('-')) index++;
  }
  return basename(words[index] ?? '');
}

/** Does this argv run the pm2 CLI (`pm2 …`, `node …/pm2 …`)? */
export function runsPm2Cli(command: string, args: readonly string[]): boolean {
  return isPm2Cli([command, ...args].join(' '));
}

export function isPm2Cli(commandLine: string): boolean {
  return programOf(commandLine) === 'pm2';
}

/** pm2-runtime (or its old name pm2-docker) itself: `tail -f /var/log/pm2-runtime` is not. */
export function isPm2Runtime(commandLine: string): boolean {
  return RUNTIMES.has(programOf(commandLine));
}

/** The PM2_HOME a God daemon's title names, or undefined when the title is no God daemon's. */
export function godTitleHome(commandLine: string): string | undefined {
  return GOD_TITLE.exec(commandLine)?.[1];
}
