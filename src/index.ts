export { supervise } from './engine/shell/supervisor.js';
export type { SuperviseOptions, SupervisorHandle, SupervisorResult } from './engine/shell/supervisor.js';
export type { TargetMode } from './engine/tree/targets.js';
export type { OnExitPolicy } from './engine/machine/stop/on-exit.js';
export type { RestartMode } from './engine/machine/outcomes/restart.js';
export type { SpawnFunction, SpawnOptions, SpawnedCommand } from './engine/children/spawn.js';
export type { CommandExit } from './engine/machine/values.js';
export type { Platform, ProcessInfo, SignalName } from './platform/index.js';
export { Logger, createLogger, type LoggerOptions, type LogFormat } from './output/log.js';
