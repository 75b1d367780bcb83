import type { LogFields, Logger } from '../../output/log.js';
import { isAlive, type Platform, type ProcessInfo, type SignalName } from '../../platform/index.js';
import type { Children } from '../children/children.js';
import { resolvePm2Cli, spawnPm2Kill, type Pm2Cli } from './pm2-cli.js';
import { godTitleHome, isPm2Runtime, type TitleHome } from './claims.js';
import { GodProof } from './proof.js';
import { describePm2Effect, describeSignal } from '../machine/format.js';
import type { ProcessTree } from '../tree/tree.js';
import type { Pm2Manager, Pm2Proof, Pm2Route, Snapshot } from '../machine/values.js';
import { processKey, restrictTargets, type Target } from '../machine/ledger/ledger.js';

export { runsPm2Cli } from './claims.js';
export { findPm2Cli } from './pm2-cli.js';

// A daemon not the tree's is left alone; the hint, when `pm2 start` handed it the apps gsup was to supervise.
const NOT_OURS = 'never signalled nor waited for';
const NOT_OURS_HINT = ': its apps are not supervised (give pm2 a PM2_HOME of its own, or run pm2-runtime)';

/** What a title or command line claims: a God daemon (serving the home it names), or pm2-runtime. */
type Claim = { kind: 'daemon'; titleHome: TitleHome } | { kind: 'runtime' };

/**
 * pm2 in the tree: its managers found (pm2-runtime by its program, a God
 * daemon by its title), signals routed to the manager alone, and the stop
 * of a God daemon through pm2: `pm2 kill` once proven gsup's (proof.ts),
 * else the stop signal to the daemon alone (pm2 then stops each app once),
 * never to its group.
 */
export class Pm2Supervision {
  private readonly warned = new Set<string>();
  /** By processKey and name; a new Map when some go (a Map emptied by deletes churns tables in the old generation). */
  private claims = new Map<string, Claim | undefined>();
  private readonly announced = new Set<number>();
  /** God daemons sent `pm2 kill` (processKey): their pid file goes away then, as expected. */
  private readonly killed = new Set<string>();
  private readonly proof: GodProof;
  /**
   * Resolved once, as the command starts (`findCli`, once it has run a while: AfterStart): a PATH search and a walk up
   * to / that `gsup -- node app.js` need not wait for. A CLI put there later is never taken.
   */
  private found?: Pm2Cli;

  constructor(
    private readonly platform: Platform,
    private readonly tree: ProcessTree,
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv,
    reaping: () => boolean,
    private readonly command: string,
    private readonly cwd: string,
    /** This gsup's token: the mark its runs carry (Provenance). */
    token: string,
  ) {
    this.proof = new GodProof(platform, env, cwd, reaping, token);
  }

  /** The pm2 CLI `pm2 kill` would run, found now and kept (the shell asks once the first run is spawned). */
  findCli(): void {
    this.found ??= resolvePm2Cli(this.command, this.env, this.cwd);
  }

  private get cli(): Pm2Cli {
    this.findCli();
    return this.found!;
  }

  noteClis(snapshot: Snapshot): void {
    this.proof.noteClis(snapshot, (info) => this.tree.lines.of(info)); // read ahead, off the loop
  }

  cliLived(info: ProcessInfo, until: number): void {
    this.proof.cliLived(info, until);
  }

  /** Is there a pm2 pid file to look at ($PM2_HOME/pm2.pid)? */
  pidFileExists(): boolean {
    return this.proof.pidFileExists();
  }

  /**
   * The pm2 managers of the tree: among gsup's children and the session
   * leaders of the tree (where a God daemon lands after `pm2 start`), or,
   * without the subreaper, named by `$PM2_HOME/pm2.pid` and started while a
   * pm2 CLI of the tree lived.
   */
  async find(snapshot: Snapshot): Promise<Pm2Manager[]> {
    const found = new Map<number, Pm2Manager>();
    const seen = new Set<string>();
    for (const info of snapshot.alive) {
      // A God daemon lands as gsup's child (subreaper) and leads a session.
      if (info.ppid !== process.pid && info.sid !== info.pid) continue;
      const manager = await this.judge(info, this.claim(info, seen));
      if (manager) found.set(info.pid, manager);
    }
    let stale = 0;
    this.claims.forEach((_claim, key) => seen.has(key) || stale++);
    if (stale > 0) {
      const kept = new Map<string, Claim | undefined>();
      this.claims.forEach((claim, key) => seen.has(key) && kept.set(key, claim));
      this.claims = kept;
    }
    this.proof.keepOnly(snapshot.alive);
    if (this.killed.size > 0) {
      const alive = new Set(snapshot.alive.map(processKey));
      for (const key of this.killed) if (!alive.has(key)) this.killed.delete(key);
    }
    const fromFile = await this.fromPidFile(snapshot, found);
    if (fromFile) found.set(fromFile.info.pid, fromFile);
    for (const { info, kind, proof } of found.values()) {
      // A daemon not proven is said by judge(), with why.
      if ((kind === 'daemon' && !proof) || this.announced.has(info.pid)) continue;
      this.announced.add(info.pid);
      const what = proof ? `God daemon ${info.pid} (${describeProof(proof)})` : `runtime ${info.pid}`;
      this.logger.info('pm2-found', `pm2 ${what}`, { pid: info.pid, kind, ...proof });
    }
    return [...found.values()];
  }

  /** Is this process a pm2 manager by what it claims (its command line, read ahead)? Undefined while not read yet. */
  isManager(info: ProcessInfo): boolean | undefined {
    const commandLine = this.tree.lines.of(info);
    if (commandLine === undefined) return undefined;
    return godTitleHome(commandLine) !== undefined || isPm2Runtime(commandLine);
  }

  /** A command line is read once per process and exec (pid, start time, name): the title pm2 sets changes the name. */
  private claim(info: ProcessInfo, seen?: Set<string>): Claim | undefined {
    const key = `${info.pid}:${info.startTime}:${info.name}`;
    seen?.add(key);
    if (!this.claims.has(key)) {
      const commandLine = this.tree.lines.of(info);
      if (commandLine === undefined) return undefined; // not read yet: no claim, none kept
      const titleHome = godTitleHome(commandLine);
      const runtime = isPm2Runtime(commandLine) ? { kind: 'runtime' as const } : undefined;
      this.claims.set(key, titleHome !== undefined ? { kind: 'daemon', titleHome } : runtime);
    }
    return this.claims.get(key);
  }

  /**
   * A manager of the tree: pm2-runtime as it is; a God daemon with its proof
   * (anew at each look), or why there is none: it then gets signals alone.
   */
  private async judge(info: ProcessInfo, claim: Claim | undefined): Promise<Pm2Manager | undefined> {
    if (!claim) return undefined;
    if (claim.kind === 'runtime') return { info, kind: 'runtime' };
    const proof = await this.proof.prove(info, claim.titleHome, true);
    if (typeof proof !== 'string') return { info, kind: 'daemon', proof };
    const message =
      `pid ${info.pid} calls itself a pm2 God daemon but is not proven gsup's: ${proof}; ` +
      'it alone gets signals, never its group, and no pm2 kill';
    const key = processKey(info);
    if (!this.killed.has(key))
      this.once(`${key}:${proof}`, 'pm2-not-proven', message, { pid: info.pid, reason: proof });
    return { info, kind: 'daemon', why: proof };
  }

  /** Without the subreaper: the God daemon `$PM2_HOME/pm2.pid` names, when it is the tree's though no member. */
  private async fromPidFile(snapshot: Snapshot, found: ReadonlyMap<number, unknown>): Promise<Pm2Manager | void> {
    const pid = this.proof.pidFromFile();
    if (pid === undefined || found.has(pid)) return undefined;
    const member = snapshot.alive.find((info) => info.pid === pid);
    if (member) return this.judge(member, this.claim(member));
    const info = await this.platform.processInfo(pid);
    if (!isAlive(info)) return undefined;
    await this.tree.lines.learn([info]);
    const claim = this.claim(info);
    if (claim?.kind !== 'daemon') return undefined;
    const outside = this.proof.outsideWhyNot(info);
    const proof = outside ?? (await this.proof.prove(info, claim.titleHome, false));
    if (typeof proof === 'string') {
      const home = this.proof.home;
      // A pm2 CLI of the tree ran: its apps went to that daemon, and gsup may end at once. Said by default then.
      const [level, hint] = this.proof.sawCli() ? (['warn', NOT_OURS_HINT] as const) : (['info', ''] as const);
      const message = `pm2 God daemon ${pid} (PM2_HOME ${home}) is not ours: ${proof}; ${NOT_OURS}${hint}`;
      this.once(`${pid}:${info.startTime}`, 'pm2-not-ours', message, { pid, home, reason: proof }, level);
      return undefined;
    }
    this.tree.adopt(info);
    return { info, kind: 'daemon', proof };
  }

  /**
   * Adjusts a forward for pm2: the processes a manager runs are left to it;
   * the manager alone gets the signal, except that a stop of a God daemon
   * goes through pm2 (`stop`). A God daemon whose parent lives in the tree
   * (a nested gsup, the pm2 CLI still starting) is that parent's, as its
   * group would be.
   */
  route(targets: Target[], snapshot: Snapshot, managers: Pm2Manager[], stop: boolean): Pm2Route {
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
    const alive = new Set(snapshot.alive.map((info) => info.pid));
    const routed = restrictTargets(targets, new Set([...alive].filter((pid) => !managed.has(pid))));
    const pm2Kill: Pm2Manager[] = [];
    for (const manager of managers) {
      const { info } = manager;
      if (manager.kind === 'daemon' && alive.has(info.ppid)) runs.delete(manager);
      else if (stop && manager.kind === 'daemon') pm2Kill.push(manager);
      else routed.push({ kind: 'process', process: info });
    }
    return { targets: routed, pm2Kill, managed, runs };
  }

  /**
   * At -v: what each manager was sent (those in `sent`; all by default), and what it does with it; a God daemon
   * stopped through pm2, as stop() did it (`killed`: with `pm2 kill`, or the signal to it alone).
   */
  announce(route: Pm2Route, signal: SignalName, how: AnnounceHow): void {
    if (!this.logger.enabled('info')) return;
    for (const [manager, apps] of route.runs) {
      if (how.sent && !how.sent(manager)) continue;
      const pm2Kill = route.pm2Kill.includes(manager) && (how.killed?.(manager) ?? false);
      const kind = manager.kind === 'daemon' ? 'God daemon' : 'runtime';
      const to = `pm2 ${kind} ${manager.info.pid}${pm2Kill ? ' (pm2 kill)' : ''}`;
      const named = apps.map((pid) => `${pid} (${this.tree.lines.describePid(pid)})`);
      const effect = describePm2Effect(signal, pm2Kill, named);
      const fields = { pid: manager.info.pid, signal, apps, pm2Kill };
      this.logger.info('pm2-forward', `${describeSignal(signal, how.received)} → ${to}${effect}`, fields);
    }
  }

  /**
   * The stop of a God daemon: `pm2 kill` (a helper of gsup's, part of the
   * tree the stop waits for, run as the daemon's user) once it is proven
   * gsup's again, now; else (not proven, no CLI, it ended, or the pid file
   * names another) `signal` to the daemon alone, through its identity: pm2
   * then stops its apps, each once. Said at the default level. True when it
   * ran `pm2 kill` (which may still fail: then the signal goes alone, said so).
   */
  async stop(manager: Pm2Manager, signal: SignalName, children: Children): Promise<boolean> {
    const { info, proof } = manager;
    const alone = (why: string) => {
      this.platform.signalProcesses([info], signal);
      const message =
        `pm2 God daemon ${info.pid}: ${signal} to it alone, no pm2 kill (${why}); ` +
        'pm2 stops its apps one after another';
      this.once(`stop:${processKey(info)}`, 'pm2-stop', message, { pid: info.pid, signal, reason: why }, 'warn');
      return false;
    };
    try {
      if (!proof) return alone(`not proven gsup's: ${manager.why ?? 'unknown'}`);
      if (!('path' in this.cli)) return alone(this.cli.why);
      const why = await this.proof.recheck(info, proof);
      if (why !== undefined) return alone(`no longer proven gsup's: ${why}`);
      const cli = this.cli.path;
      const exited = (pid: number) => children.helperExited(pid);
      const failed = (error: Error) => alone(`pm2 kill failed: ${error.message}`);
      children.spawnHelper(() => spawnPm2Kill(cli, proof, this.env, exited, failed));
      this.killed.add(processKey(info));
      const fields = { pid: info.pid, signal, home: proof.home, from: proof.from, user: proof.user };
      this.logger.notice('pm2-stop', `pm2 God daemon ${info.pid}: pm2 kill (${describeProof(proof)})`, fields);
      return true;
    } catch (error) {
      this.logger.warn('pm2-kill-failed', `pm2 kill failed: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  private once(key: string, event: string, message: string, fields: LogFields, level: 'info' | 'warn' = 'info'): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.logger[level](event, message, fields);
  }
}

/** Where a proof's home came from, and the user `pm2 kill` runs as. */
function describeProof({ home, from, user }: Pm2Proof): string {
  const source = from === 'gsup' ? "gsup's" : "the daemon's own";
  return `PM2_HOME ${home} from ${source} environment${user ? `, as uid ${user.uid} gid ${user.gid}` : ''}`;
}

/**
 * Which managers were sent the signal (all by default), which God daemons `pm2 kill` stopped (none by default),
 * and the signal a rule rewrote into it.
 */
type AnnounceHow = {
  sent?: (manager: Pm2Manager) => boolean;
  killed?: (manager: Pm2Manager) => boolean;
  received?: SignalName;
};
