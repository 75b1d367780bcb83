import { isAbsolute } from 'node:path';
import type { EnvironRead, Platform, ProcessInfo } from '../../platform/index.js';
import { MARK_VARIABLE } from '../tree/provenance.js';
import { processKey } from '../machine/ledger/ledger.js';

// A read of a daemon's environment that takes longer than this is not waited for: not proven at this look.
const READ_MS = 500;

/** The home a God daemon's own environment names, or why it cannot be taken. */
export type DaemonHome = { home: string } | { why: string };

/**
 * The PM2_HOME a God daemon was started with (a bootstrap script that
 * exports PM2_HOME is the ordinary way to set it), taken from its own
 * environment only when it carries the mark of one of this gsup's runs;
 * never from its title. Read once per process (pid and start time): an
 * environment gsup cannot read (another user's, without CAP_SYS_PTRACE)
 * proves nothing.
 */
export class DaemonHomes {
  private readonly reads = new Map<string, Promise<DaemonHome>>();

  constructor(
    private readonly platform: Platform,
    /** This gsup's token: its runs' marks are `token.run`. */
    private readonly token: string,
  ) {}

  /** The daemon's own home; a read still running after READ_MS is asked again at the next look. */
  async of(info: ProcessInfo): Promise<DaemonHome> {
    const key = processKey(info);
    let read = this.reads.get(key);
    if (!read) this.reads.set(key, (read = this.read(info.pid)));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<DaemonHome>((resolve) => {
      timer = setTimeout(() => resolve({ why: 'its environment was not read in time' }), READ_MS);
      timer.unref();
    });
    const home = await Promise.race([read, late]);
    clearTimeout(timer);
    return home;
  }

  /** Forgets the processes no longer alive. */
  keepOnly(alive: readonly ProcessInfo[]): void {
    if (this.reads.size === 0) return;
    const keys = new Set(alive.map(processKey));
    for (const key of this.reads.keys()) if (!keys.has(key)) this.reads.delete(key);
  }

  private async read(pid: number): Promise<DaemonHome> {
    const environValue = this.platform.environValue;
    if (!environValue) return { why: 'its environment cannot be read here' };
    const [marks, home] = await Promise.all([
      environValue.call(this.platform, pid, MARK_VARIABLE),
      environValue.call(this.platform, pid, 'PM2_HOME'),
    ]);
    // Unreadable (another user's, without CAP_SYS_PTRACE), failed, or read and absent: nothing proven.
    if (marks.found !== 'value' || !marks.value.split(' ').some((mark) => mark.startsWith(`${this.token}.`)))
      return { why: `no mark of gsup's runs could be read in its environment${unreadable(marks)}` };
    if (home.found !== 'value' || !home.value) return { why: 'its environment names no PM2_HOME' };
    if (!isAbsolute(home.value)) return { why: `its environment's PM2_HOME (${home.value}) is not an absolute path` };
    return { home: home.value };
  }
}

/** Why an environment was not read, when it was not: ` (EACCES)`. */
function unreadable(read: EnvironRead): string {
  return read.found === 'unreadable' || read.found === 'failed' ? ` (${read.why})` : '';
}
