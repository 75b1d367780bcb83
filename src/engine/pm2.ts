import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import { isAlive, type Platform, type ProcessInfo, type SignalName } from '../platform/index.js';
import { processKey, restrictTargets, type Target } from './plan.js';
import { readSmallRegularFile } from '../platform/small-file.js';
import { executable, onPath } from '../platform/which.js';
import type { ProcessTree, TreeSnapshot } from './tree.js';

/**
 * A process that runs pm2's God: the daemon `pm2 start` leaves behind, or a
 * `pm2-runtime` in the foreground. It and its apps share a process group; a
 * signal to that group reaches each app twice (from the kernel, then from
 * pm2), and pm2 restarts an app signalled behind its back. So signals go to
 * the manager alone, and a stop goes through pm2 itself.
 */
export interface Pm2Manager {
  info: ProcessInfo;
  kind: 'daemon' | 'runtime';
  home: string;
}

const GOD_TITLE = /^PM2 v[\w.-]+: God Daemon \((.*)\)$/;
const RUNTIME = /(^|[/\s])(pm2-runtime|pm2-docker)(\s|$)/;
// The pm2 CLI (`pm2 start …`), run by node: it starts a God daemon when none runs.
const CLI = /^(\S*\/)?(node\S*\s+(\S*\/)?)?pm2(\s|$)/;
// A pid file larger than this is no pm2 pid file.
const PID_FILE_MAX = 64;
// The pm2 CLIs whose lives are remembered (the newest).
const CLIS_KEPT = 32;

/** When a pm2 CLI of the tree lived, in start-time units (`until` is Infinity while it lives). */
interface CliLife {
  pid: number;
  startTime: number;
  until: number;
}

/** Does this argv run the pm2 CLI (`pm2 …`, `node …/pm2 …`)? */
export function runsPm2Cli(command: string, args: readonly string[]): boolean {
  return CLI.test([command, ...args.slice(0, 1)].join(' '));
}

export class Pm2Supervision {
  private readonly warned = new Set<string>();
  private readonly verdicts = new Map<string, Pm2Manager | undefined>();
  private readonly announced = new Set<number>();
  private readonly clis = new Map<string, CliLife>();
  private cliPath?: string | null;

  constructor(
    private readonly platform: Platform,
    private readonly tree: ProcessTree,
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv,
    /** As PID 1 or subreaper every daemon of the tree descends from gsup: no pid file is trusted then. */
    private readonly reaping: () => boolean,
    private readonly command: string,
    private readonly cwd: string,
  ) {}

  /** The pm2 CLI, looked for only when a God daemon has to be stopped. */
  private get cli(): string | undefined {
    if (this.cliPath === undefined) this.cliPath = findPm2Cli(this.command, this.env, this.cwd) ?? null;
    return this.cliPath ?? undefined;
  }

  /**
   * Remembers when the tree's pm2 CLIs lived (a command line read once per
   * new node process): a God daemon that started within one's life is the
   * tree's, though it left it (no subreaper).
   */
  noteClis(snapshot: TreeSnapshot): void {
    if (snapshot.left.length > 0) {
      const now = this.platform.startTimeNow();
      const left = new Set(snapshot.left);
      for (const cli of this.clis.values()) if (cli.until === Infinity && left.has(cli.pid)) cli.until = now;
    }
    for (const info of snapshot.joined) {
      if (info.name !== '' && !info.name.startsWith('node') && info.name !== 'pm2') continue;
      if (CLI.test(this.tree.lines.of(info) ?? '')) this.cliLived(info, Infinity);
    }
  }

  /** A pm2 CLI of the tree lived from its start until `until` (Infinity: it still lives). */
  cliLived(info: ProcessInfo, until: number): void {
    this.clis.set(processKey(info), { pid: info.pid, startTime: info.startTime, until });
    for (const key of this.clis.keys()) if (this.clis.size > CLIS_KEPT) this.clis.delete(key);
  }

  /**
   * The pm2 managers of the tree: among gsup's children and the session
   * leaders of the tree (where a God daemon lands after `pm2 start`), or,
   * without the subreaper, named by `$PM2_HOME/pm2.pid` and started while a
   * pm2 CLI of the tree lived.
   */
  async find(snapshot: TreeSnapshot): Promise<Pm2Manager[]> {
    const found = new Map<number, Pm2Manager>();
    const members = new Map(snapshot.alive.map((info) => [info.pid, info]));
    const seen = new Set<string>();
    for (const info of snapshot.alive) {
      // A God daemon lands as gsup's child (subreaper) and leads a session.
      if (info.ppid !== process.pid && info.sid !== info.pid) continue;
      const manager = this.verdict(info, seen);
      if (manager) found.set(info.pid, manager);
    }
    for (const key of this.verdicts.keys()) if (!seen.has(key)) this.verdicts.delete(key);
    const fromFile = await this.fromPidFile(members);
    if (fromFile && !found.has(fromFile.info.pid)) found.set(fromFile.info.pid, fromFile);
    for (const manager of found.values()) {
      if (!this.announced.has(manager.info.pid)) {
        this.announced.add(manager.info.pid);
        this.logger.info('pm2-found', `pm2 ${manager.kind === 'daemon' ? 'God daemon' : 'runtime'} ${manager.info.pid} (PM2_HOME ${manager.home})`, {
          pid: manager.info.pid,
          kind: manager.kind,
          home: manager.home,
        });
      }
    }
    return [...found.values()];
  }

  /** Is this process a pm2 manager, by its command line read ahead? Undefined while it is not read yet. */
  isManager(info: ProcessInfo): boolean | undefined {
    return this.tree.lines.of(info) === undefined ? undefined : this.verdict(info) !== undefined;
  }

  /** A command line is read once per process and exec (pid, start time, name): the title pm2 sets changes the name. */
  private verdict(info: ProcessInfo, seen?: Set<string>): Pm2Manager | undefined {
    const key = `${info.pid}:${info.startTime}:${info.name}`;
    seen?.add(key);
    const read = this.tree.lines.of(info) !== undefined; // else no verdict yet, none kept
    if (!this.verdicts.has(key) && read) this.verdicts.set(key, this.classify(info, this.homeFromEnv()));
    return this.verdicts.get(key);
  }

  /** Is there a pm2 pid file to look at ($PM2_HOME/pm2.pid)? */
  pidFileExists(): boolean {
    return existsSync(join(this.homeFromEnv(), 'pm2.pid'));
  }

  private homeFromEnv(): string {
    // Relative to the start directory, as pm2 in the command sees it (gsup itself has moved to /).
    return resolve(this.cwd, this.env.PM2_HOME || join(this.env.HOME || homedir(), '.pm2'));
  }

  private classify(info: ProcessInfo, fallbackHome: string): Pm2Manager | undefined {
    const commandLine = this.tree.lines.of(info) ?? '';
    const god = GOD_TITLE.exec(commandLine);
    if (god) return { info, kind: 'daemon', home: god[1] };
    if (RUNTIME.test(commandLine)) return { info, kind: 'runtime', home: fallbackHome };
    return undefined;
  }

  private async fromPidFile(members: Map<number, ProcessInfo>): Promise<Pm2Manager | undefined> {
    const home = this.homeFromEnv();
    const pid = Number(readSmallRegularFile(join(home, 'pm2.pid'), PID_FILE_MAX)?.trim() || NaN);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    const member = members.get(pid);
    if (member) return this.classify(member, home);
    const info = await this.platform.processInfo(pid);
    if (!isAlive(info)) return undefined;
    await this.tree.lines.learn([info]);
    const manager = this.classify(info, home);
    if (!manager) return undefined;
    const why = this.notOurs(info);
    if (why) {
      const key = `${pid}:${info.startTime}`;
      if (!this.warned.has(key)) {
        this.warned.add(key);
        this.logger.info('pm2-not-ours', `pm2 God daemon ${pid} (PM2_HOME ${home}) is not ours: ${why}; never signalled`, { pid, home, reason: why });
      }
      return undefined;
    }
    this.tree.adopt(info);
    return manager;
  }

  /** Why a God daemon named by the pid file (and no member of the tree) is not the tree's; undefined when it is. */
  private notOurs(info: ProcessInfo): string | undefined {
    if (this.reaping()) return 'started outside the tree (as subreaper or PID 1, gsup is the ancestor of every daemon of its tree)';
    if (this.platform.ownerMatches && !this.platform.ownerMatches(info.pid)) return 'it belongs to another user';
    for (const cli of this.clis.values()) if (cli.startTime <= info.startTime && info.startTime <= cli.until) return undefined;
    return 'started outside the tree (no pm2 CLI of the tree was running when it started)';
  }

  /**
   * Adjusts a forward for pm2: the processes a manager runs are left to it;
   * the manager alone gets the signal, except that a stop of a God daemon is
   * `pm2 kill` (apps in parallel, each once, none restarted).
   */
  route(targets: Target[], snapshot: TreeSnapshot, managers: Pm2Manager[], signal: SignalName, stop: boolean): Pm2Route {
    if (managers.length === 0) return { targets, pm2Kill: [], managed: new Set(), runs: new Map() };
    // Each manager with everything below it: those are pm2's to signal.
    const managed = new Set<number>();
    const runs = new Map<Pm2Manager, number[]>();
    for (const manager of managers) {
      const below: number[] = [];
      const queue = [...(snapshot.children.get(manager.info.pid) ?? [])];
      while (queue.length > 0) {
        const info = queue.pop()!;
        if (managed.has(info.pid)) continue;
        managed.add(info.pid);
        below.push(info.pid);
        queue.push(...(snapshot.children.get(info.pid) ?? []));
      }
      managed.add(manager.info.pid);
      runs.set(manager, below);
    }
    const others = new Set(snapshot.alive.map((info) => info.pid).filter((pid) => !managed.has(pid)));
    const routed = restrictTargets(targets, others);
    const pm2Kill: Pm2Manager[] = [];
    for (const manager of managers) {
      if (stop && manager.kind === 'daemon' && this.cli) pm2Kill.push(manager);
      else routed.push({ kind: 'process', process: manager.info });
    }
    if (stop && !this.cli && managers.some((manager) => manager.kind === 'daemon')) {
      this.warnOnce('pm2-cli-missing', `pm2 CLI not found: stopping the God daemon with ${signal} (pm2 then stops its apps one after another)`);
    }
    return { targets: routed, pm2Kill, managed, runs };
  }

  /** At -v: what each manager was sent (those in `sent`; all by default), and what it stops or signals. */
  announce(route: Pm2Route, signal: SignalName, sent?: (manager: Pm2Manager) => boolean): void {
    if (!this.logger.enabled('info')) return;
    for (const [manager, apps] of route.runs) {
      if (sent && !sent(manager)) continue;
      const pm2Kill = route.pm2Kill.includes(manager);
      this.logger.info(
        'pm2-forward',
        `${signal} → pm2 ${manager.kind === 'daemon' ? 'God daemon' : 'runtime'} ${manager.info.pid}` +
          (pm2Kill ? ' (pm2 kill)' : '') +
          (apps.length > 0 ? `, which stops or signals ${apps.map((pid) => `${pid} (${this.tree.lines.describePid(pid)})`).join(', ')}` : ''),
        { pid: manager.info.pid, signal, apps, pm2Kill },
      );
    }
  }

  /** `pm2 kill` for a God daemon: a child of gsup, so it is part of the tree the stop waits for. */
  kill(manager: Pm2Manager, onExit: (pid: number) => void): number | undefined {
    const child = spawn(process.execPath, [this.cli!, 'kill'], {
      env: { ...this.env, PM2_HOME: manager.home },
      cwd: this.cwd,
      stdio: 'ignore',
    });
    child.on('error', (error) => this.logger.warn('pm2-kill-failed', `pm2 kill failed: ${error.message}`));
    child.on('exit', () => onExit(child.pid!));
    return child.pid;
  }

  private warnOnce(event: string, message: string): void {
    if (this.warned.has(event)) return;
    this.warned.add(event);
    this.logger.warn(event, message);
  }
}

export interface Pm2Route {
  targets: Target[];
  /** God daemons to stop with `pm2 kill`. */
  pm2Kill: Pm2Manager[];
  /** The managers and every process they run. */
  managed: Set<number>;
  /** Each manager and the pids it runs. */
  runs: Map<Pm2Manager, number[]>;
}

/**
 * The pm2 CLI that goes with the command: beside a `pm2`/`pm2-runtime` the
 * command names, else `pm2` on PATH, else the project's node_modules/.bin.
 */
export function findPm2Cli(command: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const candidates: string[] = [];
  if (/^pm2(-runtime|-docker|-dev)?$/.test(basename(command))) {
    const path = onPath(command, env, cwd);
    if (path) {
      candidates.push(join(dirname(path), 'pm2'));
      try {
        candidates.push(join(dirname(realpathSync(path)), 'pm2'));
      } catch {
        // a dangling link: the other candidates remain
      }
    }
  }
  const fromPath = onPath('pm2', env, cwd);
  if (fromPath) candidates.push(fromPath);
  candidates.push(join(cwd, 'node_modules', '.bin', 'pm2'));
  for (const candidate of candidates) {
    if (executable(candidate)) {
      try {
        return realpathSync(candidate);
      } catch {
        continue;
      }
    }
  }
  return undefined;
}
