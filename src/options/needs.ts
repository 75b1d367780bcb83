import type { HealthConfig } from '../engine/health/probes.js';

// Options that do nothing without another one. Given alone, each is named once
// in a warning at start (the flag, or the variable when that is what was set),
// and gsup runs as if it had not been given; its value is still checked (a bad
// one is refused, 125, as anywhere). One rule for all of them, in this one
// table: an option added later that depends on another gets a row here.

/** What a row's condition looks at: the options as read (cli-options.ts), before the command. */
interface Read {
  health: HealthConfig | undefined;
  restart: string;
  status: object | undefined;
  waitReady: boolean;
  readyTimeout: number | undefined;
  reloadSignal: string | undefined;
}

/** How a given option was named (flag or variable), or undefined when not given: cli-options.ts's `pick`. */
export type Given = (key: string, flag: string, variable: string) => [string, string] | undefined;

interface Need {
  /** commander's key, the flag, its variable. */
  option: [key: string, flag: string, variable: string];
  /** What it needs, as the warning says it. */
  needs: string;
  /** Whether that is there. */
  met: (options: Read) => boolean;
  /** Takes the value back out where the engine would otherwise refuse or use it. */
  unset?: (options: Read) => void;
}

const HEALTH_CHECK = 'a health check (--health-cmd, --health-url or --health-file)';
const healthCheck = (options: Read) => options.health !== undefined;
const RESTARTS = '--restart on-failure or always';
const restarts = (options: Read) => options.restart !== 'never';

export const NEEDS: readonly Need[] = [
  { option: ['healthInterval', '--health-interval', 'GSUP_HEALTH_INTERVAL'], needs: HEALTH_CHECK, met: healthCheck },
  { option: ['healthTimeout', '--health-timeout', 'GSUP_HEALTH_TIMEOUT'], needs: HEALTH_CHECK, met: healthCheck },
  { option: ['healthRetries', '--health-retries', 'GSUP_HEALTH_RETRIES'], needs: HEALTH_CHECK, met: healthCheck },
  {
    option: ['healthStartPeriod', '--health-start-period', 'GSUP_HEALTH_START_PERIOD'],
    needs: HEALTH_CHECK,
    met: healthCheck,
  },
  {
    option: ['healthStartInterval', '--health-start-interval', 'GSUP_HEALTH_START_INTERVAL'],
    needs: HEALTH_CHECK,
    met: healthCheck,
  },
  // The heartbeat file's age: no other probe reads it.
  {
    option: ['healthMaxAge', '--health-max-age', 'GSUP_HEALTH_MAX_AGE'],
    needs: '--health-file',
    met: (options) => options.health?.file !== undefined,
  },
  { option: ['maxRestarts', '--max-restarts', 'GSUP_MAX_RESTARTS'], needs: RESTARTS, met: restarts },
  { option: ['restartDelay', '--restart-delay', 'GSUP_RESTART_DELAY'], needs: RESTARTS, met: restarts },
  {
    option: ['statusHost', '--status-host', 'GSUP_STATUS_HOST'],
    needs: '--status-port',
    met: (options) => options.status !== undefined,
  },
  // No word awaited and no reload's new run to wait for: nothing to time out.
  {
    option: ['readyTimeout', '--ready-timeout', 'GSUP_READY_TIMEOUT'],
    needs: '--wait-ready or --reload-signal',
    met: (options) => options.waitReady || options.reloadSignal !== undefined,
    unset: (options) => void (options.readyTimeout = undefined),
  },
  {
    option: ['reloadDrain', '--reload-drain', 'GSUP_RELOAD_DRAIN'],
    needs: '--reload-signal',
    met: (options) => options.reloadSignal !== undefined,
  },
];

/** An option given that does nothing, and the warning that says so. */
export interface Ignored {
  /** As given: the flag, or the variable. */
  option: string;
  needs: string;
  message: string;
}

/** The options given that do nothing, each once, in the table's order; their values are taken out where needed. */
export function ignoredOptions(given: Given, options: Read): Ignored[] {
  const ignored: Ignored[] = [];
  for (const need of NEEDS) {
    const named = given(...need.option);
    if (!named || need.met(options)) continue;
    need.unset?.(options);
    const option = named[1];
    ignored.push({ option, needs: need.needs, message: `${option} does nothing without ${need.needs}: ignored` });
  }
  return ignored;
}
