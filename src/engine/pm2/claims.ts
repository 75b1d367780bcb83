import { basename } from 'node:path';

// What a command line says it runs of pm2. A claim, never a proof: it
// decides routing (a manager gets signals alone); `pm2 kill` needs more
// (proof.ts).

/**
 * pm2's title for its God daemon (lib/Daemon.js), with the PM2_HOME it says it serves. Linux keeps a title
 * no longer than the process's first command line (`node …/pm2/lib/Daemon.js`): a long home loses its end,
 * closing parenthesis included.
 */
const GOD_TITLE = /^PM2 v[\w.-]+: God Daemon \((.*?)(\))?$/;
// node, nodejs, node20, node20.11 (not nodemon): the interpreter, whose script is the program.
const NODE = /^node(js)?(\d[\d.]*)?$/;
const RUNTIMES = new Set(['pm2-runtime', 'pm2-docker']);

/**
 * A command line as `node [options] script …` reads: whether node runs it,
 * node's options before the script, and the program (the script, else the
 * executable itself). Words are split at spaces (a path with one is not
 * recognised: never wrongly).
 */
export function programWords(commandLine: string): { node: boolean; options: string[]; program: string } {
  const words = commandLine.split(' ');
  const node = NODE.test(basename(words[0]));
  let index = node ? 1 : 0;
  if (node) while (index < words.length && words[index].startsWith('-')) index++;
  return { node, options: node ? words.slice(1, index) : [], program: words[index] ?? '' };
}

/** The program a command line runs, by its base name (see programWords). */
export function programOf(commandLine: string): string {
  return basename(programWords(commandLine).program);
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

/** The PM2_HOME a God daemon's title names (`cut`: only its start, the title was cut short). */
export interface TitleHome {
  readonly home: string;
  readonly cut: boolean;
}

/** The PM2_HOME a God daemon's title names, or undefined when the title is no God daemon's. */
export function godTitleHome(commandLine: string): TitleHome | undefined {
  const match = GOD_TITLE.exec(commandLine);
  return match ? { home: match[1], cut: match[2] === undefined } : undefined;
}

/** Does the title name this home (an absolute path)? A cut title names every home it begins. */
export function titleNames(title: TitleHome, home: string): boolean {
  return title.cut ? home.startsWith(title.home) : title.home === home;
}
