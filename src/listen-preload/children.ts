// What a child of a process that holds the sockets is spawned with: its stdio and its environment. Pure (no
// node: module): the preload bundles it, the unit tests drive it.

/**
 * The stdio (as the app gave it to spawn(): a string, an array, or nothing) of a child that gets `fds` (the held
 * sockets, then the report channel) at 3…: what the app asked for at 0–2, then the fds, then its IPC channel,
 * moved above them (Node tells the child where, in NODE_CHANNEL_FD, from its place here). Undefined when the app
 * asked for anything else at 3 and up: that child gets no socket.
 */
export function handOnStdio(stdio: unknown, fds: readonly number[]): unknown[] | undefined {
  let list: readonly unknown[];
  if (stdio == null) list = ['pipe', 'pipe', 'pipe'];
  // Node's own reading of the string forms (stdioStringToArray).
  else if (stdio === 'inherit') list = [0, 1, 2];
  else if (stdio === 'pipe' || stdio === 'ignore' || stdio === 'overlapped') list = [stdio, stdio, stdio];
  else if (Array.isArray(stdio)) list = stdio;
  else return undefined; // Node refuses it with its own error
  let ipc = false;
  for (let index = 3; index < list.length; index++) {
    const value = list[index];
    if (value == null || value === 'ignore') continue;
    if (value === 'ipc' && !ipc) ipc = true;
    else return undefined;
  }
  return [list[0], list[1], list[2], ...fds, ...(ipc ? ['ipc'] : [])];
}

/** handOnStdio for the synchronous forms, whose stdio Node has already made `{ type, … }` entries (no IPC). */
export function handOnSyncStdio(stdio: unknown, fds: readonly number[]): unknown[] | undefined {
  if (!Array.isArray(stdio) || stdio.length < 3) return undefined;
  for (let index = 3; index < stdio.length; index++) {
    if ((stdio[index] as { type?: unknown } | null)?.type !== 'ignore') return undefined;
  }
  return [...stdio.slice(0, 3), ...fds.map((fd) => ({ type: 'fd', fd }))];
}

/** A variable's value in `KEY=value` pairs (Node makes them from an object: each key once). */
export function pairValue(pairs: readonly string[], key: string): string | undefined {
  const prefix = `${key}=`;
  return pairs.find((pair) => pair.startsWith(prefix))?.slice(prefix.length);
}

/**
 * A child's `KEY=value` pairs: the contract's variables taken out where they hold what this process was handed
 * (`handed`: a child that gets no socket gets no LISTEN_*; a value the app set itself for its child stays), and
 * `given` put in when the child gets the sockets (then every one of `keys` is gsup's to set).
 */
export function childEnvPairs(
  pairs: readonly string[],
  keys: readonly string[],
  handed: Readonly<Record<string, string>>,
  given?: Readonly<Record<string, string>>,
): string[] {
  const kept = pairs.filter((pair) => {
    const equals = pair.indexOf('=');
    const key = pair.slice(0, equals);
    if (!keys.includes(key) && !(given && key in given)) return true;
    return !given && handed[key] !== pair.slice(equals + 1);
  });
  if (given) for (const [key, value] of Object.entries(given)) kept.push(`${key}=${value}`);
  return kept;
}

const PM2 = /^pm2(-runtime|-docker|-dev)?$/;
const NODE = /^node(js)?(\d[\d.]*)?$/;
const SHELL = /^(ba|da|z|k|a|mk)?sh$/;
// Words before a command that run it: `exec pm2`, `env X=1 pm2`, `npx pm2`.
const WRAPPERS = new Set(['exec', 'env', 'nohup', 'command', 'npx', 'time']);

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** The program of `node [options] script …` (the script), else the executable's, by base name. */
function programOf(words: readonly string[]): string {
  let index = 0;
  while (index < words.length && (/^\w+=/.test(words[index]) || WRAPPERS.has(baseName(words[index])))) index++;
  if (NODE.test(baseName(words[index] ?? ''))) {
    index++;
    while (index < words.length && words[index].startsWith('-')) index++;
  }
  return baseName((words[index] ?? '').replace(/^['"]|['"]$/g, ''));
}

/** Does a shell script run pm2 in any of its commands (`pm2 start app.js -i 2 && pm2 logs`)? */
export function scriptRunsPm2(script: string): boolean {
  return script.split(/[;&|\n()`]+/).some((part) => PM2.test(programOf(part.trim().split(/\s+/))));
}

/**
 * Does this command run pm2 (pm2's cluster reload is its own: it never gets the sockets)? `argv` is the file and
 * its arguments: `pm2 start`, `node …/bin/pm2 start`, `pm2-runtime`, `sh -c 'pm2 start app.js'`.
 */
export function runsPm2(argv: readonly string[]): boolean {
  if (PM2.test(programOf(argv))) return true;
  if (!SHELL.test(baseName(argv[0] ?? ''))) return false;
  const flag = argv.findIndex((arg, index) => index > 0 && /^-[a-z]*c[a-z]*$/.test(arg));
  return flag > 0 && typeof argv[flag + 1] === 'string' && scriptRunsPm2(argv[flag + 1]);
}

/** Is this process pm2 itself (its CLI, pm2-runtime, or the God daemon and its containers)? */
export function isPm2Process(argv: readonly string[]): boolean {
  const script = argv[1] ?? '';
  return PM2.test(baseName(script)) || script.includes('/pm2/lib/');
}
