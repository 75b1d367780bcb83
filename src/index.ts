export { supervise } from './engine/supervisor.js';
export type { SuperviseOptions, SupervisorHandle, SupervisorResult } from './engine/supervisor.js';
export type { TargetMode } from './engine/plan.js';
export type { OnExitPolicy } from './engine/on-exit.js';
export type { RestartMode } from './engine/restart.js';
export type { SpawnFunction, SpawnOptions, SpawnedCommand, CommandExit } from './engine/spawn.js';
export type { Platform, ProcessInfo, SignalName } from './platform/index.js';
export { Logger, createLogger, type LoggerOptions, type LogFormat } from './log.js';
