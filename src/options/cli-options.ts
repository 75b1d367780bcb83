import type { LogFormat } from '../output/log.js';
import { ON_EXIT_POLICIES } from '../engine/machine/stop/on-exit.js';
import { RESTART_MODES } from '../engine/machine/outcomes/restart.js';
import { TARGET_MODES } from '../engine/tree/targets.js';
import type { SignalName } from '../platform/index.js';
import { DEFAULT_CONFIG, type SupervisorConfig } from '../engine/config/config.js';
import type { HealthConfig } from '../engine/health/probes.js';
import { parseDuration } from './duration.js';
import { killTimeoutWithin } from './grace.js';
import { quoted, UsageError } from './errors.js';
import { plainFlags, USAGE } from './command-line.js';
import { parseDeathSignal, parseRewrite } from './signals.js';
import { reloadConfig, reloadDrainConfig } from './reload.js';
import { listenOptions, type ListenOptions } from './listen.js';
import { readCount } from './counts.js';
import { ignoredOptions, type Ignored } from './needs.js';

/** What the command line asks for: the engine's configuration, the command, and gsup's own logging. */
export interface CliOptions extends SupervisorConfig, ListenOptions {
  command: string;
  args: string[];
  verbosity: number;
  logFormat: LogFormat;
  /** Where to serve /livez, /readyz and /metrics; undefined: none. No host: `::` (IPv6 and IPv4), or 0.0.0.0. */
  status: { port: number; host: string | undefined } | undefined;
  /** The orchestrator's grace period (ms), when given: the kill timeout was fitted into it. */
  grace: number | undefined;
  /** `-p`: the signal gsup asks the kernel for when its parent dies. */
  pdeathsig: SignalName | undefined;
  /** Where to write why gsup ended, as given (with the flag or variable that gave it); none: Kubernetes' file. */
  terminationLog: [string, string] | undefined;
  /** Options given that do nothing without another (needs.ts): each named once in a warning at start. */
  ignored: Ignored[];
}

/** What the command line asks for: run something, or print help/version and exit 0. */
export type CliRequest = { kind: 'run'; options: CliOptions } | { kind: 'done' };

function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`invalid value ${quoted(value)} for ${what}: expected ${allowed.join(', ')}`);
}

function port(text: string, what: string): number {
  if (/^\d+$/.test(text.trim()) && Number(text) >= 1 && Number(text) <= 65535) return Number(text);
  throw new UsageError(`invalid port ${quoted(text)} for ${what}: expected 1-65535`);
}

function exitCode(text: string, what: string): number {
  if (/^\d+$/.test(text.trim()) && Number(text) <= 255) return Number(text);
  throw new UsageError(`invalid exit code ${quoted(text)} for ${what}: expected 0-255`);
}

/** A 0/1 variable that is on unless set to 0 (or false/no/off). */
function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name];
  if (value === undefined || value === '') return true;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new UsageError(`invalid value ${quoted(value)} for ${name}: expected 0 or 1`);
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** An http(s) URL the probe can GET, checked now (not 30 s later, when the first probe would fail). */
function checkUrl(text: string, what: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`invalid URL ${quoted(text)} for ${what}: expected http://host[:port]/path`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`invalid URL ${quoted(text)} for ${what}: only http:// and https:// are probed`);
}

type Pick = (key: string, flag: string, variable: string) => [string, string] | undefined;

/** The health checks asked for (Docker's names and defaults), or undefined when no probe is given. */
function healthConfig(pick: Pick): HealthConfig | undefined {
  const cmd = pick('healthCmd', '--health-cmd', 'GSUP_HEALTH_CMD');
  const url = pick('healthUrl', '--health-url', 'GSUP_HEALTH_URL');
  const file = pick('healthFile', '--health-file', 'GSUP_HEALTH_FILE');
  // A duration or count that must be above 0, named by where it came from when it is not.
  const positive = (
    given: [string, string] | undefined,
    parse: (text: string, what: string) => number,
    fallback: number,
    zeroOk = false,
  ) => {
    if (!given) return fallback;
    const value = parse(...given);
    if (value === 0 && !zeroOk)
      throw new UsageError(`invalid value ${quoted(given[0])} for ${given[1]}: must be above 0`);
    return value;
  };
  const intervalMs = positive(
    pick('healthInterval', '--health-interval', 'GSUP_HEALTH_INTERVAL'),
    parseDuration,
    30_000,
  );
  const timeoutMs = positive(pick('healthTimeout', '--health-timeout', 'GSUP_HEALTH_TIMEOUT'), parseDuration, 5000);
  const startPeriodMs = positive(
    pick('healthStartPeriod', '--health-start-period', 'GSUP_HEALTH_START_PERIOD'),
    parseDuration,
    0,
    true,
  );
  const startIntervalMs = positive(
    pick('healthStartInterval', '--health-start-interval', 'GSUP_HEALTH_START_INTERVAL'),
    parseDuration,
    5000,
  );
  const maxAgeMs = positive(
    pick('healthMaxAge', '--health-max-age', 'GSUP_HEALTH_MAX_AGE'),
    parseDuration,
    2 * intervalMs,
  );
  const retries = positive(pick('healthRetries', '--health-retries', 'GSUP_HEALTH_RETRIES'), readCount, 3);
  for (const given of [cmd, url, file]) {
    if (given && given[0].trim() === '')
      throw new UsageError(`empty value for ${given[1]}: a probe needs something to run or read`);
  }
  if (url) checkUrl(...url);
  if (!cmd && !url && !file) return undefined;
  return {
    cmd: cmd?.[0],
    url: url?.[0],
    file: file?.[0],
    intervalMs,
    timeoutMs,
    startPeriodMs,
    startIntervalMs,
    maxAgeMs,
    retries,
  };
}

/** `--wait-ready` (off unless given) and `--ready-timeout` (without the wait it does nothing: needs.ts). */
function readyConfig(
  flags: Record<string, any>,
  env: NodeJS.ProcessEnv,
  pick: Pick,
): { waitReady: boolean; readyTimeout: number | undefined } {
  const fromEnv = env.GSUP_WAIT_READY !== undefined && env.GSUP_WAIT_READY !== '' && envSwitch(env, 'GSUP_WAIT_READY');
  const waitReady = flags.waitReady === true || fromEnv;
  const given = pick('readyTimeout', '--ready-timeout', 'GSUP_READY_TIMEOUT');
  if (!given) return { waitReady, readyTimeout: undefined };
  const readyTimeout = parseDuration(...given);
  if (readyTimeout === 0) throw new UsageError(`invalid value ${quoted(given[0])} for ${given[1]}: must be above 0`);
  return { waitReady, readyTimeout };
}

/**
 * Reads argv (without node and script) and the environment. A flag wins over
 * its GSUP_* variable; both go through the same checks. Throws UsageError.
 */
export async function parseCommandLine(
  argv: string[],
  env: NodeJS.ProcessEnv,
  version: string,
  write: (text: string) => void,
): Promise<CliRequest> {
  // Commander only for what the plain reader leaves (command-line.ts): no option at all is plain too.
  const read = plainFlags(argv) ?? (await import('./flags.js')).readFlags(argv, version, write);
  if (read === 'done') return { kind: 'done' };
  const { flags, args: commandLine } = read;
  try {
    return { kind: 'run', options: optionsOf(flags, commandLine, env) };
  } catch (error) {
    // How to report it: a --log-format json given (GSUP_LOG_FORMAT is read where it is reported).
    if (error instanceof UsageError) Object.assign(error, { logFormat: flags.logFormat });
    throw error;
  }
}

/** The options for flags (as commander read them) and variables; the command line's rest is the command. */
function optionsOf(flags: Record<string, any>, commandLine: string[], env: NodeJS.ProcessEnv): CliOptions {
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

  const duration = (given: [string, string] | undefined) => given && { ms: parseDuration(...given), what: given[1] };
  const stopDelay = duration(pick('stopDelay', '--stop-delay', 'GSUP_STOP_DELAY')) ?? {
    ms: DEFAULT_CONFIG.stopDelay,
    what: '--stop-delay',
  };
  const grace = duration(pick('grace', '--grace', 'GSUP_GRACE'));
  const killTimeout = killTimeoutWithin(
    grace,
    duration(pick('killTimeout', '--kill-timeout', 'GSUP_KILL_TIMEOUT')),
    stopDelay,
    DEFAULT_CONFIG.killTimeout,
  );
  const statusPort = pick('statusPort', '--status-port', 'GSUP_STATUS_PORT');
  const statusHost = pick('statusHost', '--status-host', 'GSUP_STATUS_HOST')?.[0];
  const target = pick('target', '--target', 'GSUP_TARGET');
  const onExit = pick('onExit', '--on-exit', 'GSUP_ON_EXIT');
  const logFormat = pick('logFormat', '--log-format', 'GSUP_LOG_FORMAT');
  const restart = pick('restart', '--restart', 'GSUP_RESTART');
  const maxRestarts = pick('maxRestarts', '--max-restarts', 'GSUP_MAX_RESTARTS');
  const restartDelay = pick('restartDelay', '--restart-delay', 'GSUP_RESTART_DELAY');
  const health = healthConfig(pick);
  const pdeathsig = pick('pdeathsig', '--pdeathsig', 'GSUP_PDEATHSIG');
  const { waitReady, readyTimeout } = readyConfig(flags, env, pick);
  const rewrite = new Map<SignalName, SignalName | null>();
  for (const [value, what] of pickList('rewrite', '--rewrite', 'GSUP_REWRITE')) {
    const [from, to] = parseRewrite(value, what);
    rewrite.set(from, to);
  }

  let verbosity = 0;
  if (flags.quiet) verbosity = -1;
  else if (flags.verbose !== undefined) verbosity = Math.min(flags.verbose, 2);
  else if (env.GSUP_VERBOSE) {
    if (!/^(-1|[0-2])$/.test(env.GSUP_VERBOSE))
      throw new UsageError(
        `invalid value ${quoted(env.GSUP_VERBOSE)} for GSUP_VERBOSE: expected -1 (errors only), 0, 1 or 2`,
      );
    verbosity = Number(env.GSUP_VERBOSE);
  }

  const options: Omit<CliOptions, 'command' | 'args' | 'ignored'> = {
    // On in the CLI (the library's default is off: it changes the host process).
    subreaper: flags.subreaper === false ? false : envSwitch(env, 'GSUP_SUBREAPER'),
    pm2: flags.pm2 === false ? false : envSwitch(env, 'GSUP_PM2'),
    killTimeout,
    stopDelay: stopDelay.ms,
    status: statusPort && { port: port(...statusPort), host: statusHost },
    grace: grace?.ms,
    terminationLog: pick('terminationLog', '--termination-log', 'GSUP_TERMINATION_LOG'),
    target: target ? oneOf(target[0], TARGET_MODES, target[1]) : DEFAULT_CONFIG.target,
    onExit: onExit ? oneOf(onExit[0], ON_EXIT_POLICIES, onExit[1]) : DEFAULT_CONFIG.onExit,
    logFormat: logFormat ? oneOf(logFormat[0], ['text', 'json'] as const, logFormat[1]) : 'text',
    restart: restart ? oneOf(restart[0], RESTART_MODES, restart[1]) : DEFAULT_CONFIG.restart,
    maxRestarts: maxRestarts ? readCount(...maxRestarts) : DEFAULT_CONFIG.maxRestarts,
    restartDelay: restartDelay ? parseDuration(...restartDelay) : DEFAULT_CONFIG.restartDelay,
    rewrite,
    successExit: pickList('successExit', '--success-exit', 'GSUP_SUCCESS_EXIT').map(([value, what]) =>
      exitCode(value, what),
    ),
    verbosity,
    health,
    pdeathsig: pdeathsig && parseDeathSignal(...pdeathsig),
    waitReady,
    readyTimeout,
    reloadSignal: undefined,
    reloadDrain: reloadDrainConfig(pick),
    ...listenOptions(
      pickList('listen', '--listen', 'GSUP_LISTEN'),
      flags.listenPreload !== false && envSwitch(env, 'GSUP_LISTEN_PRELOAD'),
    ),
  };
  options.reloadSignal = reloadConfig(pick, options);

  const [command, ...args] = commandLine;
  if (command === undefined) throw new UsageError(`no command given (usage: gsup ${USAGE})`);
  if (command.trim() === '') throw new UsageError('the command is empty: nothing to run');
  const ignored = ignoredOptions(pick, options);
  return { ...options, ignored, command, args };
}
