import { basename } from 'node:path';
import type { Logger } from '../../output/log.js';
import type { NotifySocket, Platform } from '../../platform/index.js';

/** A word the app said of itself, and of which run (the run whose own notify socket or IPC channel carried it). */
export type Heard = (run: number, word: 'ready' | 'stopping', via: string) => void;
type Started = { env: NodeJS.ProcessEnv; ipc: ((message: unknown) => unknown) | undefined };

// The longest datagram text a -vv line shows.
const SHOWN_MAX = 200;

/**
 * Where gsup hears the app say it is ready (--wait-ready), for every run:
 * sd_notify's socket, one per run (a word counts only for the run whose
 * socket carried it), named in that run's environment as NOTIFY_SOCKET (it
 * reaches the app through npx, tsx and shells); and pm2's
 * `process.send('ready')`, over an IPC channel given only to a direct Node
 * child: Node takes NODE_CHANNEL_FD at start and drops it, but anything else
 * would pass the variable and the fd down the tree to the first Node process
 * (npx or tsx, which drop it; or past a program that closed or reused the
 * fd, where Node then fails to start).
 */
export class ReadyListeners {
  /** Each live run's notify socket (each holds a thread of libuv's pool while it waits: retire them). */
  private readonly sockets = new Map<number, NotifySocket>();
  private readonly ipc: boolean;
  private failed = false;

  constructor(
    command: string,
    private readonly platform: Platform,
    private readonly logger: Logger,
    private readonly heard: Heard,
  ) {
    this.ipc = /^(node|nodejs)(\.exe)?$/i.test(basename(command)) || command === process.execPath;
    // The first run's socket, made now: a system that has none is said at start.
    this.open(1);
  }

  /** Run `id` starts: its environment (its own NOTIFY_SOCKET), and its IPC listener when it is a direct Node child. */
  started(id: number, env: NodeJS.ProcessEnv): Started {
    const said = (message: unknown) => message === 'ready' && this.heard(id, 'ready', "process.send('ready')");
    const ipc = this.ipc ? said : undefined;
    const socket = this.sockets.get(id) ?? this.open(id);
    return { env: socket ? { ...env, NOTIFY_SOCKET: socket.path } : env, ipc };
  }

  /** Run `id` is over: its socket is closed (a word said on it now would count for nothing). */
  retire(id: number): void {
    this.sockets.get(id)?.close();
    this.sockets.delete(id);
  }

  /**
   * Run `id`'s socket. None on this system is said once, at the first run's, and every run starts without one; a
   * later run's that cannot be had (EMFILE) throws: that run could not be prepared (a failed reload or start).
   */
  private open(id: number): NotifySocket | undefined {
    if (this.failed) return undefined;
    const socket = this.platform.openNotifySocket?.((text) => this.datagram(id, text)) ?? 'not on this system';
    if (typeof socket !== 'string') return (this.sockets.set(id, socket), socket);
    if (id > 1) throw new Error(`no NOTIFY_SOCKET for run ${id}: ${socket}`);
    this.failed = true;
    const ipc = this.ipc ? "only process.send('ready') is heard" : 'no word can be heard (the command is not node)';
    this.logger.warn('notify-socket', `--wait-ready: no NOTIFY_SOCKET (${socket}): ${ipc}`, { why: socket });
    return undefined;
  }

  /** sd_notify: assignments, one a line; READY=1 and STOPPING=1 are words, the rest (STATUS=, WATCHDOG=1) is not. */
  private datagram(run: number, text: string): void {
    const shown = text.length > SHOWN_MAX ? `${text.slice(0, SHOWN_MAX)}…` : text;
    this.logger.debug('notify', `NOTIFY_SOCKET of run ${run}: ${shown}`, { text, run });
    for (const line of text.split('\n')) {
      if (line === 'READY=1') this.heard(run, 'ready', 'READY=1 on NOTIFY_SOCKET');
      else if (line === 'STOPPING=1') this.heard(run, 'stopping', 'STOPPING=1 on NOTIFY_SOCKET');
    }
  }

  /** The end: every socket closed and its folder removed. */
  close(): void {
    for (const id of [...this.sockets.keys()]) this.retire(id);
  }
}
