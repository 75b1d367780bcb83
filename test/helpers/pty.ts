import { execFileSync } from 'node:child_process';
import { GSUP, Run, type RunOptions } from './gsup.js';

// A terminal for tests: util-linux's `script` runs a shell command as the
// leader of a new session on a pty, the way `docker run -it` or a login
// does; what the test writes to its stdin is typed into that terminal.

/** Whether `script` can run a command on a pty here; else why not. */
export const ptySkipReason: string | undefined = (() => {
  try {
    const out = execFileSync('script', ['-qefc', 'tty', '/dev/null'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    return /\/dev\/pts\//.test(out) ? undefined : `script printed no pty name (${out.trim()})`;
  } catch (error) {
    return `util-linux script is not usable: ${(error as Error).message.split('\n')[0]}`;
  }
})();
if (ptySkipReason) console.log(`terminal tests skipped: ${ptySkipReason}`);

export const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** `gsup ARGS` as a shell command line (for a pty's shell). */
export const gsupLine = (args: string[]) => [process.execPath, GSUP, ...args].map(quote).join(' ');

/** `script` by its path: a test may run it with a PATH that finds nothing. */
export const SCRIPT: string = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).trim() || 'script';
  } catch {
    return 'script';
  }
})();

/** Runs `commandLine` (sh syntax) as the session leader of a new pty. */
export function inPty(commandLine: string, options: RunOptions = {}): Run {
  return new Run(SCRIPT, ['-qefc', commandLine, '/dev/null'], {
    ...options,
    pty: true,
    env: { SHELL: '/bin/sh', TERM: 'dumb', PS1: '$ ', ...options.env },
  });
}

/** An interactive bash with job control on a new pty: type commands with `write`. */
export function shellInPty(): Run {
  return inPty('exec bash --norc --noprofile -i');
}

export const CTRL_C = '\x03';
export const CTRL_Z = '\x1a';
