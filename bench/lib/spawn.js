// Starting the processes a figure measures, and reading what they print.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** gsup as a user runs it: node, then the bin script. */
export const GSUP = [process.execPath, `${ROOT}bin/gsup.cjs`];
/** The floor of what Node allows (fixtures/naive-forwarder.js): spawn detached, forward every signal to the group. */
export const NAIVE = [process.execPath, `${ROOT}fixtures/naive-forwarder.js`];
export const fixture = (name) => `${ROOT}fixtures/${name}`;

export const sleep = (delay) => new Promise((resolve) => setTimeout(resolve, delay));

/** Whether `tool` is on the PATH. */
export const has = (tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;

/** Whether this machine lets us make a PID namespace (`unshare --pid --fork --mount-proc`). */
export const unshareWorks = () =>
  spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0;

/** Feeds each whole line of the child's stdout to `onLine`. */
export function lines(child, onLine) {
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop();
    for (const line of parts) onLine(line);
  });
}

/** Resolves with the first line of stdout that `test` accepts; rejects if the child exits first. */
export function lineWhere(child, test) {
  return new Promise((resolve, reject) => {
    let found = false;
    lines(child, (line) => {
      if (found || !test(line)) return;
      found = true;
      resolve(line);
    });
    // 'close': after the output has been read to its end.
    child.once('close', (code, signal) => found || reject(new Error(`exited (${code ?? signal}) before the line`)));
  });
}

export const exited = (child) =>
  new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
