import { basename } from 'node:path';
import type { Logger } from '../../log.js';
import type { NotifySocket, Platform } from '../../platform/index.js';

/** A word the app said of itself, and of which run (the latest started, for the notify socket). */
export type Heard = (run: number, word: 'ready' | 'stopping', via: string) => void;
type Started = { env: NodeJS.ProcessEnv; ipc: ((message: unknown) => unknown) | undefined };

// The longest datagram text a -vv line shows.
const SHOWN_MAX = 200;

/**
 * Where gsup hears the app say it is ready (--wait-ready), for every run:
 * sd_notify's socket, made once and named in each run's environment as
 * NOTIFY_SOCKET (it reaches the app through npx, tsx and shells); and pm2's
 * `process.send('ready')`, over an IPC channel given only to a direct Node
 * child: Node takes NODE_CHANNEL_FD at start and drops it, but anything else
 * would pass the variable and the fd down the tree to the first Node process
 * (npx or tsx, which drop it; or past a program that closed or reused the
 * fd, where Node then fails to start).
 */
export class ReadyListeners {
  private readonly socket: NotifySocket | undefined;
  /** The run the notify socket's words are of: the latest started (a stop ends the older one first). */
  private run = 0;
  private readonly ipc: boolean;

  constructor(
    command: string,
    platform: Platform,
    private readonly logger: Logger,
    private readonly heard: Heard,
  ) {
    this.ipc = /^(node|nodejs)(\.exe)?$/i.test(basename(command)) || command === process.execPath;
    const socket = platform.openNotifySocket?.((text) => this.datagram(text)) ?? 'not on this system';
    if (typeof socket === 'string') {
      const ipc = this.ipc ? "only process.send('ready') is heard" : 'no word can be heard (the command is not node)';
      logger.warn('notify-socket', `--wait-ready: no NOTIFY_SOCKET (${socket}): ${ipc}`, { why: socket });
    } else this.socket = socket;
  }

  /** Run `id` starts: its environment (NOTIFY_SOCKET), and its IPC listener when it is a direct Node child. */
  started(id: number, env: NodeJS.ProcessEnv): Started {
    this.run = id;
    const said = (message: unknown) => message === 'ready' && this.heard(id, 'ready', "process.send('ready')");
    const ipc = this.ipc ? said : undefined;
    return { env: this.socket ? { ...env, NOTIFY_SOCKET: this.socket.path } : env, ipc };
  }

  /** sd_notify: assignments, one a line; READY=1 and STOPPING=1 are words, the rest (STATUS=, WATCHDOG=1) is not. */
  private datagram(text: string): void {
    const shown = text.length > SHOWN_MAX ? `${text.slice(0, SHOWN_MAX)}…` : text;
    this.logger.debug('notify', `NOTIFY_SOCKET: ${shown}`, { text });
    for (const line of text.split('\n')) {
      if (line === 'READY=1') this.heard(this.run, 'ready', 'READY=1 on NOTIFY_SOCKET');
      else if (line === 'STOPPING=1') this.heard(this.run, 'stopping', 'STOPPING=1 on NOTIFY_SOCKET');
    }
  }

  /** The end: the socket closed and its folder removed. */
  close(): void {
    this.socket?.close();
  }
}
