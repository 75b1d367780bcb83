import { VARIABLES } from '../engine/listen/wire.js';
// gsup's own settings, as variables (every option has one): read by this gsup, never handed to the command, so
// a gsup the command starts does not take them for its own. Variables that are no settings pass: the runs' mark
// (GSUP_RUN), GSUP_FFI.
export const SETTINGS = [
  'GSUP_KILL_TIMEOUT',
  'GSUP_GRACE',
  'GSUP_STOP_DELAY',
  'GSUP_TARGET',
  'GSUP_REWRITE',
  'GSUP_ON_EXIT',
  'GSUP_SUCCESS_EXIT',
  'GSUP_RESTART',
  'GSUP_MAX_RESTARTS',
  'GSUP_RESTART_DELAY',
  'GSUP_HEALTH_CMD',
  'GSUP_HEALTH_URL',
  'GSUP_HEALTH_FILE',
  'GSUP_HEALTH_MAX_AGE',
  'GSUP_HEALTH_INTERVAL',
  'GSUP_HEALTH_TIMEOUT',
  'GSUP_HEALTH_RETRIES',
  'GSUP_HEALTH_START_PERIOD',
  'GSUP_HEALTH_START_INTERVAL',
  'GSUP_WAIT_READY',
  'GSUP_READY_TIMEOUT',
  'GSUP_STATUS_PORT',
  'GSUP_STATUS_HOST',
  'GSUP_TERMINATION_LOG',
  'GSUP_SUBREAPER',
  'GSUP_PM2',
  'GSUP_PDEATHSIG',
  'GSUP_VERBOSE',
  'GSUP_LOG_FORMAT',
  'GSUP_LISTEN',
  'GSUP_LISTEN_PRELOAD',
  'GSUP_RELOAD_SIGNAL',
  'GSUP_RELOAD_DRAIN',
] as const;

/**
 * What a process is handed with listening sockets (systemd's and gsup's own --listen): when gsup itself was
 * handed them, they are its own (held for a --listen, else closed: engine/listen/handed.ts), never the
 * command's; under --listen each run is handed its own.
 */
const HANDED = VARIABLES;

/** The command's environment: gsup's own, without gsup's settings, nor sockets gsup was handed and cannot pass. */
export function withoutSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest = { ...env };
  for (const name of SETTINGS) delete rest[name];
  for (const name of HANDED) delete rest[name];
  return rest;
}
