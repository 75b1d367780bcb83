import { Command, CommanderError, Option } from 'commander';
import type { LogFormat } from '../log.js';
import { ON_EXIT_POLICIES, type OnExitPolicy } from '../engine/on-exit.js';
import { TARGET_MODES, type TargetMode } from '../engine/targets.js';
import type { SignalName } from '../platform/index.js';
import { parseDuration } from './duration.js';
import { UsageError } from './errors.js';
import { parseRewrite } from './signals.js';

export interface CliOptions {
  command: string;
  args: string[];
  killTimeout: number;
  target: TargetMode;
  rewrite: Map<SignalName, SignalName | null>;
  stopDelay: number;
  onExit: OnExitPolicy;
  successExit: number[];
  verbosity: number;
  logFormat: LogFormat;
  subreaper: boolean;
  pm2: boolean;
}

/** What the command line asks for: run something, or print help/version and exit 0. */
export type CliRequest = { kind: 'run'; options: CliOptions } | { kind: 'done' };

const USAGE = '[options] [--] <command> [args...]';

const EXAMPLES = `
Examples:
  Docker:    ENTRYPOINT ["gsup", "--"]   then   CMD ["node", "server.js"]
  npx/tsx:   gsup -- npx tsx src/index.ts
  pm2:       gsup -- pm2 start app.js -i 2

Exit status: the command's code; 128+N when it died of signal N; 126 not
executable; 127 not found; 125 gsup's own error.
`;

function buildProgram(version: string, write: (text: string) => void): Command {
  const program = new Command('gsup')
    .usage(USAGE)
    .description('Run a command, forward signals to its whole process tree exactly once, stop the tree within a deadline, exit with its status.')
    .version(version, '--version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .argument('[command...]')
    .passThroughOptions()
    .allowExcessArguments()
    .exitOverride()
    .configureOutput({ writeOut: write, writeErr: () => {} })
    .addHelpText('after', EXAMPLES);
  const option = (flags: string, description: string, env: string, fallback: string) =>
    program.addOption(new Option(flags, `${description} [env ${env}, default ${fallback}]`));
  option('-t, --kill-timeout <duration>', 'time between the stop signal and SIGKILL of what is still alive', 'GSUP_KILL_TIMEOUT', '10s');
  option('--target <mode>', 'where forwarded signals go: group, child or tree', 'GSUP_TARGET', 'group');
  program.addOption(
    new Option('-r, --rewrite <from:to>', 'rewrite a received signal before forwarding (TERM:INT, 15:2; to 0 drops it), repeatable [env GSUP_REWRITE, comma list]').argParser(
      collect,
    ),
  );
  option('--stop-delay <duration>', 'on SIGTERM, wait this long before forwarding', 'GSUP_STOP_DELAY', '0');
  option('--on-exit <policy>', 'when the command exits leaving processes: auto, stop, wait or exit', 'GSUP_ON_EXIT', 'auto');
  program.addOption(
    new Option('-e, --success-exit <code>', 'exit 0 when the command exits with this code, repeatable [env GSUP_SUCCESS_EXIT, comma list]').argParser(collect),
  );
  program.addOption(new Option('--no-subreaper', 'do not register as child subreaper (Linux) [env GSUP_SUBREAPER=0]'));
  program.addOption(new Option('--no-pm2', 'do not look for pm2 God daemons [env GSUP_PM2=0]'));
  program.addOption(new Option('-v, --verbose', 'log more: every forwarded signal, tree changes (-vv: debug) [env GSUP_VERBOSE=0-2]').argParser(count));
  program.addOption(new Option('-q, --quiet', 'log errors only'));
  option('--log-format <format>', 'text or json', 'GSUP_LOG_FORMAT', 'text');
  return program;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function count(_value: string, previous: number | undefined): number {
  return (previous ?? 0) + 1;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`invalid value "${value}" for ${what}: expected ${allowed.join(', ')}`);
}

function exitCode(text: string, what: string): number {
  if (/^\d+$/.test(text.trim()) && Number(text) <= 255) return Number(text);
  throw new UsageError(`invalid exit code "${text}" for ${what}: expected 0-255`);
}

/** A 0/1 variable that is on unless set to 0 (or false/no/off). */
function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name];
  if (value === undefined || value === '') return true;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new UsageError(`invalid value "${value}" for ${name}: expected 0 or 1`);
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/**
 * Reads argv (without node and script) and the environment. A flag wins over
 * its GSUP_* variable; both go through the same checks. Throws UsageError.
 */
export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv, version: string, write: (text: string) => void): CliRequest {
  const program = buildProgram(version, write);
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
        return { kind: 'done' };
      }
      throw new UsageError(`${error.message.replace(/^error: /, '')} (see gsup --help)`);
    }
    throw error;
  }
  const flags = program.opts();
  // The flag if given, else the variable (named in errors as such), else nothing.
  const pick = (key: string, flag: string, variable: string): [string, string] | undefined => {
    if (flags[key] !== undefined) return [flags[key], flag];
    const fromEnv = env[variable];
    return fromEnv !== undefined && fromEnv !== '' ? [fromEnv, variable] : undefined;
  };
  const pickList = (key: string, flag: string, variable: string): Array<[string, string]> => {
    if (flags[key] !== undefined) return (flags[key] as string[]).map((value) => [value, flag]);
    return list(env[variable] ?? '').map((value) => [value, variable]);
  };

  const killTimeout = pick('killTimeout', '--kill-timeout', 'GSUP_KILL_TIMEOUT');
  const stopDelay = pick('stopDelay', '--stop-delay', 'GSUP_STOP_DELAY');
  const target = pick('target', '--target', 'GSUP_TARGET');
  const onExit = pick('onExit', '--on-exit', 'GSUP_ON_EXIT');
  const logFormat = pick('logFormat', '--log-format', 'GSUP_LOG_FORMAT');
  const rewrite = new Map<SignalName, SignalName | null>();
  for (const [value] of pickList('rewrite', '--rewrite', 'GSUP_REWRITE')) {
    const [from, to] = parseRewrite(value);
    rewrite.set(from, to);
  }

  let verbosity = 0;
  if (flags.quiet) verbosity = -1;
  else if (flags.verbose !== undefined) verbosity = Math.min(flags.verbose, 2);
  else if (env.GSUP_VERBOSE) {
    if (!/^[0-2]$/.test(env.GSUP_VERBOSE)) throw new UsageError(`invalid value "${env.GSUP_VERBOSE}" for GSUP_VERBOSE: expected 0, 1 or 2`);
    verbosity = Number(env.GSUP_VERBOSE);
  }

  const options: Omit<CliOptions, 'command' | 'args'> = {
    subreaper: flags.subreaper === false ? false : envSwitch(env, 'GSUP_SUBREAPER'),
    pm2: flags.pm2 === false ? false : envSwitch(env, 'GSUP_PM2'),
    killTimeout: killTimeout ? parseDuration(...killTimeout) : 10_000,
    stopDelay: stopDelay ? parseDuration(...stopDelay) : 0,
    target: target ? oneOf(target[0], TARGET_MODES, target[1]) : 'group',
    onExit: onExit ? oneOf(onExit[0], ON_EXIT_POLICIES, onExit[1]) : 'auto',
    logFormat: logFormat ? oneOf(logFormat[0], ['text', 'json'] as const, logFormat[1]) : 'text',
    rewrite,
    successExit: pickList('successExit', '--success-exit', 'GSUP_SUCCESS_EXIT').map(([value, what]) => exitCode(value, what)),
    verbosity,
  };

  const [command, ...args] = program.args;
  if (command === undefined) throw new UsageError(`no command given (usage: gsup ${USAGE})`);
  return { kind: 'run', options: { ...options, command, args } };
}
