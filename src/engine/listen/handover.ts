import type { Logger } from '../../output/log.js';
import type { Platform } from '../../platform/index.js';
import type { HeldInput } from '../machine/state.js';
import type { HeldSockets } from './held.js';
import { preloads } from './node-options.js';
import { readReports } from './report.js';
import { FIRST_FD, LISTEN_FDNAMES, LISTEN_FDS, LISTEN_ID, REPORT_FD, type TellWord } from './wire.js';

/**
 * The preload that unchanged Node apps load under --listen (src/listen-preload.ts, installed by
 * engine/listen/preload-file.ts): what a run's spawn asks of it.
 */
export interface ListenPreload {
  /** The command's NODE_OPTIONS: the app's own first (or none), then the preload, quoted. */
  nodeOptions(appNodeOptions: string | undefined): string | undefined;
}

/** What one run's spawn gets of the held sockets (children/run.ts puts it in place). */
export interface RunHandover {
  /** For fds 3…: the held sockets, then the report channel's far end (Node's IPC, if any, comes after). */
  readonly fds: readonly number[];
  /** LISTEN_FDS, LISTEN_FDNAMES, GSUP_LISTEN_ID, GSUP_REPORT_FD (and NODE_OPTIONS with the preload). */
  readonly env: NodeJS.ProcessEnv;
  /** The exec step that sets LISTEN_PID to the command's own pid (undefined: none could be had, said once). */
  readonly exec: { argv: string[]; helper: boolean } | undefined;
  /**
   * gsup's preload is the first code a Node process of this run loads (the app's NODE_OPTIONS preload nothing
   * before it): that process sets LISTEN_PID to its own pid before any of the app's (listen-preload.ts).
   */
  readonly preloadFirst: boolean;
  /** After the spawn: gsup lets go of the far end (the run holds it now). */
  spawned(): void;
}

/**
 * The held sockets as each run gets them (systemd's convention, so apps written for socket activation work
 * unchanged), with a report channel of its own per run: a word on it counts for that run only. State per
 * run, never global: two runs may live at once.
 */
export class Handover {
  private readonly channels = new Map<number, ReturnType<typeof readReports>>();
  private readonly exec: RunHandover['exec'];

  constructor(
    private readonly held: HeldSockets,
    private readonly platform: Platform,
    logger: Logger,
    private readonly heard: (input: HeldInput) => void,
    private readonly preload: ListenPreload | undefined,
  ) {
    const step = platform.listenPidStep?.() ?? 'not on this system';
    if (typeof step === 'string') logger.warn('listen-pid', `--listen: no LISTEN_PID for the command (${step})`);
    this.exec = typeof step === 'string' ? undefined : step;
  }

  /** Run `run` starts: its fds, environment and exec step; its report channel read from its spawn on. */
  started(run: number, env: NodeJS.ProcessEnv): RunHandover {
    const sockets = this.held.fds();
    if (sockets.some((fd) => fd === undefined)) throw new Error('a held socket is missing at a spawn');
    // Before the channel: nothing that can throw comes between its making and the spawn that takes it.
    const nodeOptions = this.preload?.nodeOptions(env.NODE_OPTIONS);
    const pair = this.platform.sockets!.pair();
    if (typeof pair === 'string') throw new Error(`no report channel for run ${run}: ${pair}`);
    const [near, far] = pair;
    const { LISTEN_PID: _, ...rest } = env;
    const runEnv: NodeJS.ProcessEnv = {
      ...rest,
      [LISTEN_FDS]: String(sockets.length),
      [LISTEN_FDNAMES]: this.held.names.join(':'),
      [LISTEN_ID]: this.held.id(),
      [REPORT_FD]: String(FIRST_FD + sockets.length),
    };
    if (this.preload) {
      if (nodeOptions === undefined) delete runEnv.NODE_OPTIONS;
      else runEnv.NODE_OPTIONS = nodeOptions;
    }
    return {
      fds: [...(sockets as number[]), far],
      env: runEnv,
      exec: this.exec,
      preloadFirst: nodeOptions !== undefined && preloads(nodeOptions) && !preloads(env.NODE_OPTIONS),
      // Read from once the run is spawned, while the command starts: what the run says waits in the channel.
      spawned: () => {
        const sockets = this.platform.sockets!;
        sockets.close(far);
        this.channels.set(run, readReports(sockets.channel, near, run, this.held.names, this.heard));
      },
    };
  }

  /** gsup's word to run `run` (one process of it that took a held socket reads it). */
  tell(run: number, word: TellWord): void {
    this.channels.get(run)?.tell(word);
  }

  /** Run `run` is over (the next one started, or gsup ends): its channel is let go. */
  retire(run: number): void {
    this.channels.get(run)?.close();
    this.channels.delete(run);
  }

  close(): void {
    for (const run of [...this.channels.keys()]) this.retire(run);
  }
}
