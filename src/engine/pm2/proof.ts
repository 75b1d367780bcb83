import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { isAlive, type Platform, type ProcessInfo } from '../../platform/index.js';
import { readSmallRegularFile } from '../../platform/small-file.js';
import { isPm2Cli, titleNames, type TitleHome } from './claims.js';
import type { Pm2Proof, Snapshot } from '../machine/values.js';
import { DaemonHomes } from './daemon-home.js';
import { processKey } from '../machine/ledger/ledger.js';

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

/**
 * Whether a process that calls itself a pm2 God daemon is gsup's to stop
 * with `pm2 kill`. Its title proves nothing: the daemon must serve a
 * PM2_HOME gsup knows — gsup's own (from its environment, never from the
 * title), or the one in the daemon's own environment when it descends from
 * a run and carries the run's mark (daemon-home.ts) — be the very process
 * that home's `pm2.pid` names (the start time gsup saw, still), and run as a
 * user gsup can run `pm2 kill` as (its own; any, as root). A God daemon
 * outside the tree (no subreaper) must also have started while a pm2 CLI of
 * the tree lived.
 */
export class GodProof {
  /** gsup's PM2_HOME: $PM2_HOME, else $HOME/.pm2 (pm2's rule), as the command sees it from the start directory. */
  readonly home: string;
  /** `$PM2_HOME/pm2.pid`, joined once (looked for at each forward and look). */
  private pidFile?: string;
  private readonly clis = new Map<string, CliLife>();
  private readonly homes: DaemonHomes;

  constructor(
    private readonly platform: Platform,
    env: NodeJS.ProcessEnv,
    private readonly cwd: string,
    /** As PID 1 or subreaper every daemon of the tree descends from gsup: no pid file is trusted then. */
    private readonly reaping: () => boolean,
    /** This gsup's token (its runs' mark). */
    token: string,
  ) {
    this.home = resolve(cwd, env.PM2_HOME || join(env.HOME || homedir(), '.pm2'));
    this.homes = new DaemonHomes(platform, token);
  }

  /** Is there a pm2 pid file to look at? */
  pidFileExists(): boolean {
    return existsSync((this.pidFile ??= join(this.home, 'pm2.pid')));
  }

  /** The pid `$PM2_HOME/pm2.pid` names (read without blocking, only a small regular file): gsup's home by default. */
  pidFromFile(home = this.home): number | undefined {
    const path = home === this.home ? (this.pidFile ??= join(home, 'pm2.pid')) : join(home, 'pm2.pid');
    // Looked for at each look, and mostly absent: a failed open makes an Error (and its stack), existsSync none.
    if (!existsSync(path)) return undefined;
    const pid = Number(readSmallRegularFile(path, PID_FILE_MAX)?.trim() || NaN);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  /**
   * The proof that a God daemon whose title names `titleHome` is gsup's, or
   * why there is none. `descends`: a member of the tree (not a daemon
   * outside it that gsup's pid file names), whose own environment may name
   * its home when it carries a run's mark. The pid file is read first, the
   * process after: if it is still the one seen then, the file named it
   * while it lived.
   */
  async prove(info: ProcessInfo, titleHome: TitleHome, descends: boolean): Promise<Pm2Proof | string> {
    // A cut title's start resolves to the start of the same path (a trailing slash goes), when it is absolute.
    const cutShort = titleHome.cut && !isAbsolute(titleHome.home);
    const title = { ...titleHome, home: cutShort ? '' : resolve(this.cwd, titleHome.home) };
    let home = this.home;
    let from: Pm2Proof['from'] = 'gsup';
    if (!titleNames(title, this.home)) {
      const other = `its title names another PM2_HOME than ${this.home}`;
      if (!descends) return other;
      const own = await this.homes.of(info);
      if ('why' in own) return `${other}, and ${own.why}`;
      if (!titleNames(title, own.home)) {
        return `its title names another PM2_HOME than its environment does (${own.home})`;
      }
      ({ home } = own);
      from = 'daemon';
    }
    if (this.pidFromFile(home) !== info.pid) return `${join(home, 'pm2.pid')} does not name it`;
    const user = await this.userOf(info);
    if (typeof user === 'string') return user;
    const now = await this.platform.processInfo(info.pid);
    if (!isAlive(now) || now.startTime !== info.startTime) return 'it is no longer the process seen';
    return { home, from, user };
  }

  /** Why a daemon proven at a look no longer is, just before `pm2 kill`; undefined when it still is. */
  async recheck(info: ProcessInfo, proof: Pm2Proof): Promise<string | undefined> {
    if (this.pidFromFile(proof.home) !== info.pid) return `${join(proof.home, 'pm2.pid')} no longer names it`;
    const user = await this.userOf(info);
    if (typeof user === 'string') return user;
    if (user?.uid !== proof.user?.uid || user?.gid !== proof.user?.gid) return 'it changed its user';
    const now = await this.platform.processInfo(info.pid);
    return isAlive(now) && now.startTime === info.startTime ? undefined : 'it is no longer the process seen';
  }

  /** Forgets what was read of processes no longer alive. */
  keepOnly(alive: readonly ProcessInfo[]): void {
    this.homes.keepOnly(alive);
  }

  /**
   * The user `pm2 kill` runs as: the daemon's own, never more (undefined:
   * gsup's, the same); or why it cannot. Only root can run it as another.
   */
  private async userOf(info: ProcessInfo): Promise<Pm2Proof['user'] | string> {
    const uid = process.geteuid?.();
    const gid = process.getegid?.();
    if (uid === undefined || gid === undefined) return undefined; // no users (Windows)
    if (!this.platform.processUser) {
      if (!this.platform.ownerMatches) return 'its user cannot be told here';
      return this.platform.ownerMatches(info.pid) ? undefined : 'it runs as another user than gsup';
    }
    const user = await this.platform.processUser(info.pid);
    if (!user) return 'its user cannot be read (or its real and effective ids differ)';
    if (user.uid === uid && user.gid === gid) return undefined;
    if (uid !== 0)
      return `it runs as uid ${user.uid} gid ${user.gid}: gsup (uid ${uid}) can run pm2 kill only as itself`;
    return user;
  }

  /** Why a God daemon named by the pid file, and no member of the tree, is not the tree's; undefined when it is. */
  outsideWhyNot(info: ProcessInfo): string | undefined {
    if (this.reaping()) {
      return 'started outside the tree (as subreaper or PID 1, gsup is the ancestor of every daemon of its tree)';
    }
    if (this.platform.ownerMatches && !this.platform.ownerMatches(info.pid)) return 'it belongs to another user';
    const { startTime } = info;
    for (const cli of this.clis.values()) if (cli.startTime <= startTime && startTime <= cli.until) return undefined;
    return 'started outside the tree (no pm2 CLI of the tree was running when it started)';
  }

  /**
   * Remembers when the tree's pm2 CLIs lived (a command line read once per
   * new node process): a God daemon that started within one's life is the
   * tree's, though it left it (no subreaper).
   */
  /** Whether a pm2 CLI of the tree was seen (its apps went to some daemon). */
  sawCli(): boolean {
    return this.clis.size > 0;
  }

  noteClis(snapshot: Snapshot, lineOf: (info: ProcessInfo) => string | undefined): void {
    if (snapshot.left.length > 0) {
      const now = this.platform.startTimeNow();
      const left = new Set(snapshot.left);
      for (const cli of this.clis.values()) if (cli.until === Infinity && left.has(cli.pid)) cli.until = now;
    }
    for (const info of snapshot.joined) {
      if (info.name !== '' && !info.name.startsWith('node') && info.name !== 'pm2') continue;
      if (isPm2Cli(lineOf(info) ?? '')) this.cliLived(info, Infinity);
    }
  }

  /** A pm2 CLI of the tree lived from its start until `until` (Infinity: it still lives). */
  cliLived(info: ProcessInfo, until: number): void {
    this.clis.set(processKey(info), { pid: info.pid, startTime: info.startTime, until });
    for (const key of this.clis.keys()) if (this.clis.size > CLIS_KEPT) this.clis.delete(key);
  }
}
