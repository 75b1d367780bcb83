// NODE_OPTIONS as Node reads it (node_options.cc, ParseNodeOptionsEnvVar): arguments are separated by spaces;
// double quotes group, and inside them a backslash takes the next character as it is. Pure: gsup appends its
// preload with it, and the preload (listen-preload/) checks a child's NODE_OPTIONS with it.

/** One argument for NODE_OPTIONS: in double quotes, `"` and `\` escaped. */
export function quoteNodeOption(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** NODE_OPTIONS split as Node splits it; undefined when Node would refuse it (an unterminated string or escape). */
export function splitNodeOptions(value: string): string[] | undefined {
  const args: string[] = [];
  let quoted = false;
  let fresh = true;
  for (let index = 0; index < value.length; index++) {
    let char = value[index];
    if (char === '\\' && quoted) {
      if (index + 1 === value.length) return undefined;
      char = value[++index];
    } else if (char === ' ' && !quoted) {
      fresh = true;
      continue;
    } else if (char === '"') {
      quoted = !quoted;
      continue;
    }
    if (fresh) args.push(char);
    else args[args.length - 1] += char;
    fresh = false;
  }
  return quoted ? undefined : args;
}

/** Whether these NODE_OPTIONS already preload `path` (`--require path`, `-r path`, `--require=path`). */
export function requires(nodeOptions: string | undefined, path: string): boolean {
  const args = nodeOptions === undefined ? [] : (splitNodeOptions(nodeOptions) ?? []);
  return args.some(
    (arg, index) =>
      ((arg === '--require' || arg === '-r') && args[index + 1] === path) ||
      arg === `--require=${path}` ||
      arg === `-r=${path}`,
  );
}

/** Whether these NODE_OPTIONS name code Node runs before the main module (`--require`, `-r`, `--import`, a loader). */
export function preloads(nodeOptions: string | undefined): boolean {
  const args = nodeOptions === undefined ? [] : (splitNodeOptions(nodeOptions) ?? []);
  return args.some((arg) => /^(--require|-r|--import|--loader|--experimental-loader)(=|$)/.test(arg));
}

/**
 * The app's NODE_OPTIONS with `--require "<path>"` after them: the app's own options first, untouched. Options
 * Node would refuse are given back as they are (the app's start fails as it would without gsup, with Node's own
 * message); a preload already there is not added twice.
 */
export function withPreload(app: string | undefined, path: string): string {
  const own = app ?? '';
  if (splitNodeOptions(own) === undefined) return own;
  if (requires(own, path)) return own;
  const preload = `--require ${quoteNodeOption(path)}`;
  return own.trim() === '' ? preload : `${own} ${preload}`;
}
