// The command line's shape as gsup knows it without commander, whose bundle costs a start ~8 ms. flags.ts defines
// the options for commander; LONG and SHORT below are a copy kept by hand: an option added, renamed or removed
// there is changed here too (test/unit/options-plain-flags.test.ts fails until the two name the same options, and
// compares what each reads on a random corpus).
export const USAGE = '[options] [--] <command> [args...]';

/** How an option is given: with a value; with a value, repeatable; a switch on; off (`--no-NAME`); a count. */
type Kind = 'value' | 'list' | 'on' | 'off' | 'count';

export const LONG = new Map<string, Kind>([
  ['kill-timeout', 'value'],
  ['target', 'value'],
  ['rewrite', 'list'],
  ['stop-delay', 'value'],
  ['on-exit', 'value'],
  ['success-exit', 'list'],
  ['restart', 'value'],
  ['max-restarts', 'value'],
  ['restart-delay', 'value'],
  ['health-cmd', 'value'],
  ['health-url', 'value'],
  ['health-file', 'value'],
  ['health-max-age', 'value'],
  ['health-interval', 'value'],
  ['health-timeout', 'value'],
  ['health-retries', 'value'],
  ['health-start-period', 'value'],
  ['health-start-interval', 'value'],
  ['wait-ready', 'on'],
  ['ready-timeout', 'value'],
  ['reload-signal', 'value'],
  ['reload-drain', 'value'],
  ['status-port', 'value'],
  ['status-host', 'value'],
  ['grace', 'value'],
  ['pdeathsig', 'value'],
  ['termination-log', 'value'],
  ['listen', 'list'],
  ['no-listen-preload', 'off'],
  ['no-subreaper', 'off'],
  ['no-pm2', 'off'],
  ['verbose', 'count'],
  ['quiet', 'on'],
  ['log-format', 'value'],
]);
export const SHORT = new Map([
  ['-t', 'kill-timeout'],
  ['-r', 'rewrite'],
  ['-e', 'success-exit'],
  ['-p', 'pdeathsig'],
  ['-v', 'verbose'],
  ['-q', 'quiet'],
]);

/** Commander's key for an option: its name in camelCase, without `no-`. */
const keyOf = (name: string) => name.replace(/^no-/, '').replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());

// Commander's defaults: an option defined only as --no-NAME is on.
const DEFAULTS = Object.fromEntries(
  [...LONG].filter(([, kind]) => kind === 'off').map(([name]) => [keyOf(name), true]),
);

/**
 * gsup's options in their plain forms (`--name VALUE`, `--name=VALUE`, `--switch`, `-t VALUE`, `-v`; `-vv`,
 * `-vvv`… count as many), or none, then the command, after `--` or from its first word (as commander's
 * passThroughOptions reads it; none: an empty one, which optionsOf refuses): what commander reads there, without
 * loading it. Anything else is left to commander (undefined): a short option
 * with its value run into it (`-t5s`), short options run together, help and version, an unknown option. So are two
 * forms commander reads alike, declined only to stay on the safe side: a value after a space that begins with `-`,
 * and a word that begins with `-` where the command would begin (`-1`).
 */
export function plainFlags(argv: readonly string[]): { flags: Record<string, unknown>; args: string[] } | undefined {
  const flags: Record<string, any> = { ...DEFAULTS };
  let at = 0;
  for (; at < argv.length && argv[at] !== '--'; at++) {
    const arg = argv[at];
    if (!arg.startsWith('-')) return { flags, args: argv.slice(at) };
    if (/^-vv+$/.test(arg)) {
      flags.verbose = (flags.verbose ?? 0) + arg.length - 1;
      continue;
    }
    // `--name=VALUE`: the value is all after the first `=`, whatever it is (an option's value only).
    const long = arg.startsWith('--');
    const equals = long ? arg.indexOf('=') : -1;
    const name = long ? arg.slice(2, equals < 0 ? undefined : equals) : SHORT.get(arg);
    const kind = name === undefined ? undefined : LONG.get(name);
    if (name === undefined || kind === undefined) return undefined;
    const key = keyOf(name);
    if (equals >= 0 && kind !== 'value' && kind !== 'list') return undefined;
    if (kind === 'on' || kind === 'off') flags[key] = kind === 'on';
    else if (kind === 'count') flags[key] = (flags[key] ?? 0) + 1;
    else {
      const value = equals >= 0 ? arg.slice(equals + 1) : argv[++at];
      if (value === undefined || (equals < 0 && value.startsWith('-'))) return undefined;
      flags[key] = kind === 'list' ? [...(flags[key] ?? []), value] : value;
    }
  }
  return { flags, args: argv.slice(at + 1) };
}
