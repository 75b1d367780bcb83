import type { SpawnFunction } from '../../src/engine/children/spawn.js';
import { supervise, type SuperviseOptions } from '../../src/engine/shell/supervisor.js';
import { Logger } from '../../src/output/log.js';
import type { SignalName } from '../../src/platform/index.js';
import { FakePlatform } from './fake-platform.js';
import type { CommandExit } from '../../src/engine/machine/values.js';

/** gsup itself in the fake process table: the engine takes this process's pid for its own. */
export const GSUP = process.pid;

export interface Command {
  pid: number;
  finish: (exit: CommandExit) => void;
}

/**
 * The shell with an injected platform and spawn: an in-memory process table,
 * a fake SIGCHLD, no real process and no real signal. Each spawn adds a
 * command (pid 500, then 600, …: a group and session of its own) and its app
 * (the command's pid + 1, in the command's group). By default both die of
 * the first stop signal, and the command's exit is then reported.
 */
export function shellSetup({ reaping = false }: { reaping?: boolean } = {}) {
  const platform = new FakePlatform();
  platform.add({ pid: GSUP, ppid: 1, pgid: 1, sid: 1 });
  if (reaping) platform.enableReaping(GSUP);
  const commands: Command[] = [];
  const spawn: SpawnFunction = () => {
    const pid = 500 + commands.length * 100;
    platform.add({ pid, ppid: GSUP }); // the command: group and session of its own
    platform.add({ pid: pid + 1, ppid: pid, pgid: pid, sid: pid }); // its app
    let finish!: (exit: CommandExit) => void;
    const exited = new Promise<CommandExit>((resolve) => (finish = resolve));
    commands.push({ pid, finish });
    return { pid, exited, stdout: null, stderr: null };
  };
  platform.onSignal = (info, signal) => {
    if (signal !== 'SIGTERM' && signal !== 'SIGINT' && signal !== 'SIGKILL') return;
    platform.processes.delete(info.pid);
    const command = commands.find((candidate) => candidate.pid === info.pid);
    command?.finish({ code: null, signal });
  };
  const lines: string[] = [];
  const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) });
  /** Supervises `command` (by default `app`) with the fakes; options given win. */
  const start = (options: SuperviseOptions = {}, command = 'app', args: string[] = []) =>
    supervise(command, args, { platform, spawn, logger, subreaper: reaping, ...options });
  /** From now on the command and its app ignore stop signals: only SIGKILL ends them. */
  const ignoreStop = () => {
    platform.onSignal = (info, signal) => {
      if (signal !== 'SIGKILL') return;
      platform.processes.delete(info.pid);
      commands.find((command) => command.pid === info.pid)?.finish({ code: null, signal });
    };
  };
  return { platform, spawn, commands, lines, start, ignoreStop };
}

/** The pids `signal` was sent to (negative: a group), in order. */
export const killsOf = (platform: FakePlatform, signal: SignalName) =>
  platform.kills.filter((kill) => kill.signal === signal).map((kill) => kill.pid);
