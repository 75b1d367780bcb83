import { constants } from 'node:os';
import type { SignalName } from '../../platform/types.js';
import { MAX_DURATION_MS, readDuration } from './duration.js';
import type { HealthConfig } from '../health/probes.js';
import { ON_EXIT_POLICIES, type OnExitPolicy } from '../machine/stop/on-exit.js';
import { RESTART_MODES, type RestartMode } from '../machine/outcomes/restart.js';
import { TARGET_MODES, type TargetMode } from '../tree/targets.js';
import { reloadSignalProblem } from './reload-signal.js';

/**
 * What one supervision is asked to do, every field set: the CLI builds it
 * from flags and GSUP_* variables, the library from `supervise()`'s options,
 * both through `resolveConfig`. The engine never applies a default itself.
 */
export interface SupervisorConfig {
  /** Milliseconds between the stop signal and SIGKILL of what is left. */
  killTimeout: number;
  /** Where forwarded signals go. */
  target: TargetMode;
  /** Received signal → signal to forward; null drops it. */
  rewrite: ReadonlyMap<SignalName, SignalName | null>;
  /** Milliseconds to wait on SIGTERM before forwarding it. */
  stopDelay: number;
  /** What to do when the command exits while descendants live. */
  onExit: OnExitPolicy;
  /** Exit codes that count as success (become 0). */
  successExit: readonly number[];
  /**
   * Linux: become child subreaper, so that orphans of the tree come to gsup and are reaped (as PID
   * 1 they always are).
   */
  subreaper: boolean;
  /** Look for pm2 God daemons and pm2-runtime, and route signals and stops through pm2. */
  pm2: boolean;
  restart: RestartMode;
  /** Quick failures in a row before giving up. */
  maxRestarts: number;
  /** First delay before a restart, in ms; doubles after each quick failure, up to 30 s. */
  restartDelay: number;
  /** Health checks that act: none unless a probe is given. */
  health: HealthConfig | undefined;
  /** Ready only once the app says so: `process.send('ready')` (a direct Node child) or READY=1 on $NOTIFY_SOCKET. */
  waitReady: boolean;
  /**
   * With waitReady: ms without the word after a start that make it a failed start; undefined: no limit. A reload's
   * next run not ready by then (30 s when undefined) fails the reload.
   */
  readyTimeout: number | undefined;
  /** This signal is not forwarded: it starts a new run beside the serving one, which is retired once it is ready. */
  reloadSignal: SignalName | undefined;
  /**
   * Milliseconds a reload's old run may drain its connections (its preload told to: held sockets) before its stop
   * signal; its kill timeout counts after it, beside it.
   */
  reloadDrain: number;
}

/** A duration as the library takes it: milliseconds, or a string with units (`'500ms'`, `'10s'`, `'1m30s'`). */
export type Duration = number | string;

const HEALTH_DURATIONS = ['maxAgeMs', 'intervalMs', 'timeoutMs', 'startPeriodMs', 'startIntervalMs'] as const;
type HealthDurationKey = (typeof HEALTH_DURATIONS)[number];

/** `health` as the library takes it: every field but the probes, durations in milliseconds or with units. */
export type HealthOptions = Omit<HealthConfig, HealthDurationKey> & { [K in HealthDurationKey]: Duration };

/** `supervise()`'s share of the configuration: any field may be left out; durations may carry units. */
type Durations = 'killTimeout' | 'stopDelay' | 'restartDelay' | 'health' | 'readyTimeout' | 'reloadDrain';
export type ConfigOptions = Partial<Omit<SupervisorConfig, Durations>> & {
  killTimeout?: Duration;
  reloadDrain?: Duration;
  readyTimeout?: Duration;
  stopDelay?: Duration;
  restartDelay?: Duration;
  health?: HealthOptions;
};

export const DEFAULT_CONFIG: Readonly<SupervisorConfig> = Object.freeze({
  // Under `docker stop`'s 10 s: gsup's SIGKILL, its summary naming what ignored SIGTERM, and its exit come first.
  killTimeout: 8000,
  target: 'group',
  rewrite: new Map(),
  stopDelay: 0,
  onExit: 'auto',
  successExit: [],
  // Off in the library (it changes the host process); the CLI turns it on.
  subreaper: false,
  pm2: true,
  restart: 'never',
  maxRestarts: 10,
  restartDelay: 1000,
  health: undefined,
  waitReady: false,
  readyTimeout: undefined,
  reloadSignal: undefined,
  // A little over Node's own keep-alive timeout (server.keepAliveTimeout, 5 s): an idle kept-alive connection is
  // closed by the server's own timeout within the drain.
  reloadDrain: 6000,
});

/**
 * Every field given, or its default. Throws a TypeError naming the option and
 * the value for anything the engine could not use as meant: a duration that is
 * not milliseconds or a string with units, a partial `health`, a rewrite rule
 * that could never match, a reload signal that means something else or that
 * nothing would say the new run is ready for (`held`: gsup holds sockets, so
 * a run's first listen can). (The CLI's values were checked already; they pass.)
 */
export function resolveConfig(given: ConfigOptions, held = false): SupervisorConfig {
  const config: SupervisorConfig = { ...DEFAULT_CONFIG };
  type Check<K extends keyof SupervisorConfig> = (value: unknown, name: string) => SupervisorConfig[K];
  const set = <K extends keyof SupervisorConfig>(key: K, check: Check<K>) => {
    if (given[key] !== undefined) config[key] = check(given[key], key);
  };
  set('killTimeout', duration);
  set('stopDelay', duration);
  set('restartDelay', duration);
  set('target', oneOf(TARGET_MODES));
  set('onExit', oneOf(ON_EXIT_POLICIES));
  set('restart', oneOf(RESTART_MODES));
  set('maxRestarts', (value, name) => wholeNumber(value, name, 0));
  set('successExit', exitCodes);
  set('subreaper', boolean);
  set('pm2', boolean);
  set('rewrite', (value, name) => {
    if (value instanceof Map) return value;
    throw new TypeError(`${name}: ${shown(value)} is not a Map of signal names`);
  });
  set('health', health);
  set('waitReady', boolean);
  set('readyTimeout', positiveDuration);
  set('reloadDrain', duration);
  set('reloadSignal', (value, name) => {
    if (typeof value !== 'string' || !(value in constants.signals))
      throw new TypeError(`${name}: ${shown(value)} is not a signal name: use full names such as 'SIGHUP'`);
    return value as SignalName;
  });
  if (config.readyTimeout !== undefined && !config.waitReady && !config.reloadSignal) {
    const timeout = shown(given.readyTimeout);
    throw new TypeError(
      `readyTimeout: ${timeout} is given without waitReady: true or a reloadSignal (nothing awaited)`,
    );
  }
  checkRewrite(config.rewrite);
  if (config.reloadSignal) {
    const problem = reloadSignalProblem(config.reloadSignal, config.rewrite);
    if (problem) throw new TypeError(`reloadSignal: ${config.reloadSignal} cannot be the reload signal: ${problem}`);
    // Something must say when the new run is ready: its word, or its first listen on a held socket.
    if (!config.waitReady && !held)
      throw new TypeError('reloadSignal: needs waitReady: true or held sockets (listen): nothing says a run is ready');
  }
  return config;
}

/** The value, as an error line names it. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value === 'object' && value !== null ? 'an object' : String(value);
}

/** Milliseconds (a number) or a string with units, read as the CLI reads it: `'30'` is refused (s or ms?). */
function duration(value: unknown, name: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0 && value <= MAX_DURATION_MS) return value;
    throw new TypeError(`${name}: ${shown(value)} is no duration: milliseconds from 0 to ${MAX_DURATION_MS}`);
  }
  if (typeof value === 'string') {
    const read = readDuration(value);
    if ('ms' in read) return read.ms;
    const why = {
      'no-unit': 'a string needs a unit (or pass a number of milliseconds)',
      syntax: 'use e.g. 500ms, 10s, 1m30s or 1h',
      'too-long': `at most ${MAX_DURATION_MS} ms`,
    };
    throw new TypeError(`${name}: ${shown(value)} is no duration: ${why[read.problem]}`);
  }
  throw new TypeError(`${name}: ${shown(value)} is no duration: a number of ms or a string with units ('10s')`);
}

function oneOf<T extends string>(allowed: readonly T[]): (value: unknown, name: string) => T {
  return (value, name) => {
    if ((allowed as readonly unknown[]).includes(value)) return value as T;
    throw new TypeError(`${name}: ${shown(value)} is not one of ${allowed.map((item) => `'${item}'`).join(', ')}`);
  };
}

function wholeNumber(value: unknown, name: string, least: number, most = Number.MAX_SAFE_INTEGER): number {
  if (Number.isInteger(value) && (value as number) >= least && (value as number) <= most) return value as number;
  const range = most < Number.MAX_SAFE_INTEGER ? `from ${least} to ${most}` : `from ${least}`;
  throw new TypeError(`${name}: ${shown(value)} is not a whole number ${range}`);
}

function boolean(value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value;
  throw new TypeError(`${name}: ${shown(value)} is not true or false`);
}

function exitCodes(value: unknown, name: string): number[] {
  if (!Array.isArray(value)) throw new TypeError(`${name}: ${shown(value)} is not an array of exit codes`);
  return value.map((code, index) => wholeNumber(code, `${name}[${index}]`, 0, 255));
}

// Every field of HealthConfig, and how it is checked: a field added there and not here fails the type check.
const HEALTH_FIELDS: { [K in keyof HealthConfig]-?: (value: unknown, name: string) => HealthConfig[K] } = {
  cmd: probe,
  url: (value, name) => {
    const url = probe(value, name);
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      // said below
    }
    if (protocol === 'http:' || protocol === 'https:') return url;
    throw new TypeError(`${name}: ${shown(value)} is not an http:// or https:// URL`);
  },
  file: probe,
  maxAgeMs: positiveDuration,
  intervalMs: positiveDuration,
  timeoutMs: positiveDuration,
  retries: (value, name) => wholeNumber(value, name, 1),
  startPeriodMs: duration,
  startIntervalMs: positiveDuration,
};

function probe(value: unknown, name: string): string {
  if (typeof value === 'string' && value.trim() !== '') return value;
  throw new TypeError(`${name}: ${shown(value)} is not a probe: a non-empty string`);
}

function positiveDuration(value: unknown, name: string): number {
  const ms = duration(value, name);
  if (ms > 0) return ms;
  throw new TypeError(`${name}: ${shown(value)} must be above 0`);
}

/** Every field there (Docker's names; no defaults in the library), at least one probe, nothing unknown. */
function health(value: unknown, name: string): HealthConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${name}: ${shown(value)} is not an object`);
  }
  const given = value as Record<string, unknown>;
  const unknown = Object.keys(given).filter((key) => !(key in HEALTH_FIELDS));
  if (unknown.length > 0) {
    const known = Object.keys(HEALTH_FIELDS).join(', ');
    throw new TypeError(`${name}: unknown field ${unknown.map((key) => `'${key}'`).join(', ')} (known: ${known})`);
  }
  const probes = ['cmd', 'url', 'file'] as const;
  if (probes.every((key) => given[key] === undefined)) {
    throw new TypeError(`${name}: no probe: give at least one of cmd, url, file`);
  }
  const config: Record<string, unknown> = {};
  type Field = [keyof HealthConfig, (value: unknown, name: string) => unknown];
  const fields = Object.entries(HEALTH_FIELDS) as Field[];
  for (const [key, check] of fields) {
    const optional = (probes as readonly string[]).includes(key);
    if (given[key] === undefined && optional) continue;
    if (given[key] === undefined) {
      const every = `${HEALTH_DURATIONS.join(', ')}, retries`;
      throw new TypeError(`${name}.${key} is missing: the library takes every field (${every})`);
    }
    config[key] = check(given[key], `${name}.${key}`);
  }
  return config as unknown as HealthConfig;
}

// The library takes full names only ('SIGTERM'): a short one ('TERM') would be a rule that silently never applies.
function checkRewrite(rewrite: ReadonlyMap<SignalName, SignalName | null>): void {
  const known = (name: unknown) => typeof name === 'string' && name in constants.signals;
  for (const [from, to] of rewrite) {
    if (!known(from))
      throw new TypeError(`rewrite: ${JSON.stringify(from)} is not a signal name: use full names such as 'SIGTERM'`);
    if (to !== null && !known(to))
      throw new TypeError(
        `rewrite: ${JSON.stringify(to)} (for ${from}) is not a signal name: ` +
          "use full names such as 'SIGINT', or null to drop",
      );
  }
}
