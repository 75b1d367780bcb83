import type { Logger } from '../../output/log.js';
import type { MemoryCgroup, OomReading, Platform, SignalName } from '../../platform/index.js';
import type { StatusBoard } from '../shell/status-board.js';

// Deaths explained: a process of the tree that died of a SIGKILL gsup did
// not send was killed by the kernel's OOM killer (its cgroup's OOM count
// rose) or from outside (`docker kill`, `kill -9`). Exit 137 says neither.

// At the end, a look that has not answered by then is not waited for.
const SETTLE_MS = 1000;

// A command line is named up to this many characters.
const NAMED_CHARS = 200;

function clip(text: string): string {
  return text.length <= NAMED_CHARS ? text : `${text.slice(0, NAMED_CHARS)}…`;
}

export type KillVerdict = 'oom' | 'outside' | 'unknown';

/**
 * A SIGKILL death against the OOM kills counted so far and the count now:
 * a rise is the OOM killer's (one kill per death: a group OOM kill kills
 * several, each counted), none is from outside; no count, no telling.
 * Returns the verdict and the kills now accounted for.
 */
export function explainKill(
  counted: number | undefined,
  now: number | undefined,
): { verdict: KillVerdict; counted?: number } {
  if (counted === undefined || now === undefined) return { verdict: 'unknown', counted: now ?? counted };
  if (now > counted) return { verdict: 'oom', counted: counted + 1 };
  return { verdict: 'outside', counted: now };
}

/** Bytes as people read memory limits: `64 MiB`, `1.5 GiB`. */
export function formatBytes(bytes: number): string {
  const [value, unit] =
    bytes >= 2 ** 30 ? [bytes / 2 ** 30, 'GiB'] : bytes >= 2 ** 20 ? [bytes / 2 ** 20, 'MiB'] : [bytes / 1024, 'KiB'];
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
}

/** The line for a SIGKILL death gsup did not send. */
export function killLine(who: string, verdict: KillVerdict, reading: OomReading | undefined): string {
  if (verdict === 'oom') {
    const limit = reading?.limit === undefined ? 'no limit set' : `limit ${formatBytes(reading.limit)}`;
    const peak = reading?.peak === undefined ? '' : `, peak ${formatBytes(reading.peak)}`;
    return `${who} was killed by the kernel's OOM killer (memory cgroup ${limit}${peak})`;
  }
  if (verdict === 'outside') return `${who} was killed by SIGKILL from outside (the cgroup's OOM count did not rise)`;
  return `${who} was killed by SIGKILL gsup did not send: from outside or by the OOM killer (no OOM count to tell)`;
}

/**
 * Checks each SIGKILL death gsup did not send against the OOM count of
 * gsup's own memory cgroup, read at start, just after the first spawn (the
 * dead process is gone when its death is seen; in a container the tree
 * shares gsup's cgroup, and v2 counts a child cgroup's kills in its
 * parents'). The reads are small asynchronous file reads, one at a time,
 * after the death is known: never on the signal path.
 */
export class Deaths {
  /** gsup has sent SIGKILL since this run began (kill rounds): the SIGKILL deaths are its own. */
  private killing = false;
  /** What gsup forwarded to this run (a rule may make a signal SIGKILL). */
  private sent: ReadonlySet<SignalName> = new Set();
  private counted: number | undefined;
  /** Looked for at the first run's spawn: the command does not wait for it. */
  private cgroup?: Promise<MemoryCgroup | undefined>;
  /** The checks, one after the other (each consumes the count the last left). */
  private chain: Promise<void> = Promise.resolve();
  /** Checks not said yet: none, and the end waits for no read (the count at start may still be on its way). */
  private checks = 0;

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
    private readonly status: StatusBoard | undefined,
    /** The start's own work that the command does not wait for (shell/start-steps.ts: AfterStart). */
    private readonly later: (act: () => void) => void = setImmediate,
  ) {}

  /** gsup sends SIGKILL (the kill timeout, a third stop signal, a stop signal rewritten to SIGKILL). */
  gsupKills(): void {
    this.killing = true;
  }

  /**
   * A new run: gsup has killed nothing of it; `sent`, what gsup forwards to
   * it. After gsup's own SIGKILLs the count starts again from now: a rise
   * while gsup killed is no later death's.
   */
  newRun(sent: ReadonlySet<SignalName>): void {
    const first = this.cgroup === undefined;
    // Read once the command has run a while (AfterStart): the first read off the loop starts libuv's pool (~1.5 ms
    // of the loop's thread), and a command that exits at once is heard of first.
    this.cgroup ??= new Promise<void>((resolve) => this.later(resolve))
      .then(() => this.platform.ownMemoryCgroup?.())
      .catch(() => undefined);
    const resync = first || this.killing || this.sent.has('SIGKILL');
    this.killing = false;
    this.sent = sent;
    if (resync) this.chain = this.chain.then(() => this.resync()).catch(() => {});
  }

  private async resync(): Promise<void> {
    const cgroup = await this.cgroup;
    // The count alone: it says no line (two reads fewer while the command starts).
    this.counted = cgroup && (await this.read(cgroup, true))?.oomKills;
  }

  /** A process of the tree died of SIGKILL: `command`, whether it was the command; `what`, its command line or name. */
  sigkilled(pid: number | undefined, what: string, command: boolean): void {
    if (this.killing || this.sent.has('SIGKILL')) return;
    const who = command ? `the command (pid ${pid ?? '-'}: ${clip(what)})` : `pid ${pid} (${what || '?'})`;
    this.checks++;
    this.chain = this.chain
      .then(() => this.check(who, pid, command))
      .catch(() => {})
      .finally(() => this.checks--);
  }

  private async check(who: string, pid: number | undefined, command: boolean): Promise<void> {
    const cgroup = await this.cgroup;
    const reading = cgroup && (await this.read(cgroup));
    const { verdict, counted } = explainKill(this.counted, reading?.oomKills);
    this.counted = counted;
    const fields = { pid, verdict, limit: reading?.limit, peak: reading?.peak, cgroup: cgroup?.dir };
    if (verdict === 'oom') {
      if (this.status) this.status.oomKills++;
      return this.logger.warn('oom-kill', killLine(who, verdict, reading), fields);
    }
    // pm2 SIGKILLs an app that outlives its own kill timeout: for the tree's others, a -v line.
    this.logger.log(command ? 'warn' : 'info', 'sigkill', killLine(who, verdict, reading), fields);
  }

  private read(cgroup: MemoryCgroup, countOnly = false): Promise<OomReading | undefined> {
    return (this.platform.readMemoryCgroup?.(cgroup, countOnly) ?? Promise.resolve(undefined)).catch(() => undefined);
  }

  /** Every check said (at gsup's end, before the exit), or a second gone by. */
  settled(): Promise<void> {
    if (this.checks === 0) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
    return Promise.race([this.chain, late]).finally(() => clearTimeout(timer));
  }
}
