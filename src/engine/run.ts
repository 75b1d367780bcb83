import type { SupervisorConfig } from '../config.js';
import type { Platform, SignalName } from '../platform/index.js';
import type { SuperviseOptions } from './api.js';
import { defaultSpawn, type CommandExit, type SpawnedCommand } from './spawn.js';

/** One run of the command (a restart makes a new one). */
export interface CommandRun {
  id: number;
  pid: number | undefined;
  /** Its process group, when it leads one (`group` target). */
  pgid: number | undefined;
  spawned: SpawnedCommand;
  args: string[];
  startedAt: number;
  exit?: CommandExit;
  /** Signals gsup forwarded while it ran (a death by one of them is not a failure). */
  sent: Set<SignalName>;
  /** Whether the command is itself a pm2 manager (looked up once, at the first forward). */
  manager?: boolean;
}

/** Spawns the command: in a session and group of its own for the `group` target, else in gsup's. */
export function spawnRun(id: number, command: string, args: string[], config: SupervisorConfig, options: SuperviseOptions, platform: Platform): CommandRun {
  const detached = config.target === 'group';
  const spawned = (options.spawn ?? defaultSpawn(platform))(command, args, {
    detached,
    stdio: options.stdio ?? 'inherit',
    env: options.env,
    cwd: options.cwd,
  });
  return {
    id,
    pid: spawned.pid,
    // detached: setsid(), so the command leads its own session and group.
    pgid: detached ? spawned.pid : undefined,
    spawned,
    args,
    startedAt: Date.now(),
    sent: new Set(),
  };
}
