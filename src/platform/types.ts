import type { MemoryCgroup, OomReading } from './linux/proc/cgroup.js';
import type { HeldSocketCalls } from './held-sockets.js';

/** One process as the platform sees it at the time of a snapshot. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Process group id. */
  pgid: number;
  /** Session id. */
  sid: number;
  /** One-letter state as in `ps`/`/proc`: R, S, D, T, Z, X, ... */
  state: string;
  /**
   * When the process started, in a unit that only has to be stable for one
   * process (clock ticks since boot on Linux). Together with the pid it names
   * one process: a reused pid has another start time.
   */
  startTime: number;
  /** The executable's short name (`comm`), which changes on exec; '' where unknown. */
  name: string;
}

/**
 * What a read of one variable of a process's environment found: its value;
 * `absent` (read, not there); `unreadable` (gsup may not read it: another
 * user's process, and gsup without CAP_SYS_PTRACE); `gone` (the process
 * ended); `failed` (not now: no fd left, an I/O error).
 */
export type EnvironRead =
  { found: 'value'; value: string } | { found: 'absent' | 'gone' } | { found: 'unreadable' | 'failed'; why: string };

/**
 * The moment of a send as the kernel keeps it: the clock, read right before
 * the send, and the pid counter, read right after it. A process that started
 * before `tick`, or whose pid was handed out by `lastPid`, existed when the
 * signal went (or was being forked: see machine/ledger/continuity.ts).
 */
export interface SendMoment {
  /** The time, in the unit of `ProcessInfo.startTime`, cut down to it as start times are. */
  readonly tick: number;
  /** The last pid the kernel handed out (Linux: ns_last_pid); undefined where it cannot be read. */
  readonly lastPid: number | undefined;
  /** Pids wrap around below this (Linux: pid_max); undefined where unknown. */
  readonly pidMax: number | undefined;
}

/**
 * A member of a group sent a signal as a group, found outside it right after (setsid, setpgid): `pgid`, its group
 * now; `signal`, the signal in its /proc/PID/status then (pending: SigPnd or ShdPnd; blocked: SigBlk; ignored:
 * SigIgn; caught: SigCgt), undefined when not read.
 */
export interface GroupLeaver {
  readonly info: ProcessInfo;
  readonly pgid: number;
  readonly signal: { pending: boolean; blocked: boolean; ignored: boolean; caught: boolean } | undefined;
}

/** The user and group a process runs as (its real and effective ids, the same). */
export interface ProcessUser {
  uid: number;
  gid: number;
}

/** A zombie child gsup reaped, with how it ended. */
export interface ReapedChild {
  pid: number;
  code: number | null;
  /** Signal number it died of, or null. */
  signal: number | null;
}

export interface ReapResult {
  reaped: ReapedChild[];
  /** Zombies that cannot be reaped yet (their other threads are still exiting). */
  notYet: number;
}

/** gsup's own child as held from its spawn (`Platform.holdChild`): its pid, and where there are pidfds, its pidfd. */
export interface ChildHandle {
  readonly pid: number;
}

/** sd_notify's socket, bound and read: its path (for $NOTIFY_SOCKET), and its end (the folder removed). */
export interface NotifySocket {
  readonly path: string;
  close(): void;
}

/** A signal as a name (`SIGTERM`) — what Node's `process.kill` takes. */
export type SignalName = NodeJS.Signals;

/** A command to start as libuv would: its resolved path, argv, environment, session, directory and fds 3…. */
export interface SpawnRequest {
  path: string;
  argv: readonly string[];
  envPairs: readonly string[];
  /** A session (and group) of its own. */
  detached: boolean;
  cwd?: string;
  /** gsup's fds the command gets at 3, 4, …. */
  fds: readonly number[];
}

/**
 * What the engine needs from the operating system. Everything that differs
 * between Linux (`/proc`), other POSIX systems (`ps`/pidtree) and Windows
 * lives behind this interface, so the engine never asks which OS it is on.
 */
export interface Platform {
  /** Can signals other than a kill reach a process (false on Windows)? */
  readonly canSignal: boolean;
  /** Spawn through execa (cross-spawn's `.cmd` shims and PATHEXT: Windows) rather than node:child_process. */
  readonly spawnWithExeca: boolean;
  /** Every process the system shows (a snapshot). */
  listProcesses(): Promise<ProcessInfo[]>;
  /** The current facts of one pid, or undefined when there is no such process. */
  processInfo(pid: number): Promise<ProcessInfo | undefined>;
  /** The time now, in the unit of `ProcessInfo.startTime`: to place a process's start within another's life. */
  startTimeNow(): number;
  /**
   * A pid's command line, read off the event loop (a read of
   * /proc/PID/cmdline can block on a process in `D` state or a hung FUSE
   * mount): '' when it has none (a kernel thread, a zombie), undefined when
   * it cannot be read (gone) or is not known on this platform.
   */
  readCommandLine(pid: number): Promise<string | undefined>;
  /** kill(2) by number, for gsup itself only (no number can betray it). Returns false when the target is gone. */
  kill(pid: number, signal: SignalName): boolean;
  /**
   * Takes a handle on gsup's own child right after its spawn, while its pid
   * certainly names it (Node cannot have reaped it yet): Linux opens its
   * pidfd. Released with `releaseChild`.
   */
  holdChild(pid: number): ChildHandle;
  /**
   * A signal to a child held since its spawn, or (`group`) to the group it
   * leads: on Linux through its pidfd, which reaches that very group as long
   * as any member is left, never a later one with its number. Where there is
   * no pidfd (or the kernel refuses the send), kill(2) by number, only when
   * `byNumber` (the caller knows the number still names it: unreaped).
   * False when the target is gone.
   */
  signalChild(child: ChildHandle, signal: SignalName, group: boolean, byNumber: boolean): boolean;
  releaseChild(child: ChildHandle): void;
  /**
   * Asked once at start: whether signals go through identities that cannot
   * be reused here. `problem`: why not (said as a warning); `note`: a lesser
   * gap (said at -v). Absent where there are none to have (no pidfds: the
   * start time is re-read before each kill).
   */
  checkIdentity?(): { problem?: string; note?: string };
  /**
   * Signals each process only if it is still the one seen (same pid and start
   * time, not a zombie), through an identity that cannot be reused (Linux: a
   * pidfd, checked after it is opened); returns how many it reached.
   */
  signalProcesses(processes: readonly ProcessInfo[], signal: SignalName): number;
  /**
   * Signals the process group that `leader` leads (its pid is the group's
   * id), only while the leader is alive, still the one seen, and still in
   * that group: a group's id cannot be reused while its leader lives (Linux
   * ≥ 6.9 sends through the leader's pidfd: PIDFD_SIGNAL_PROCESS_GROUP
   * reaches the group whose id is that process's pid, so only a leader's
   * pidfd names its group). False for any other member, or when the leader
   * is not (signal the members one by one then).
   */
  signalGroup(leader: ProcessInfo, signal: SignalName): boolean;
  /**
   * The clock and the pid counter now, as the kernel keeps them: read around
   * a group send (which reaches every member of that moment, and each child
   * whose fork is under way). Absent where start times cannot be placed.
   */
  sendMoment?(): SendMoment;
  /** Right after a group send: its planned members (a bounded count) alive outside the group now, and why. */
  leftGroup?(members: readonly ProcessInfo[], pgid: number, signal: SignalName): GroupLeaver[];
  /**
   * Call `listener` whenever a child of gsup changes state (SIGCHLD), so a
   * wait for the tree can look again at once. Returns the unsubscribe.
   */
  watchChildren(listener: () => void): () => void;
  /**
   * Make orphans of the tree come to gsup: set the child-subreaper bit (when
   * `subreaper`), and get ready to reap zombies. Returns why it cannot, or
   * undefined when it works. Absent where orphans always go to PID 1.
   */
  adoptOrphans?(subreaper: boolean): string | undefined;
  /**
   * Ask the kernel for `signal` (a number) when gsup's parent dies
   * (PR_SET_PDEATHSIG). Returns why it cannot, or undefined when asked.
   * Absent where there is no such thing (Linux only).
   */
  askParentDeathSignal?(signal: number): string | undefined;
  /**
   * Make Node's signal pipe (one per loop; libuv drops a signal when it is
   * full) as large as allowed, finding it with `probe` (a signal to self).
   * Returns the new size in bytes, or why not. Absent where unknown.
   */
  widenSignalPipe?(probe: () => void): number | string;
  /**
   * Catches the real-time signals (no name in Node; by default each ends the process), passing each number to
   * `caught` as it comes; returns the numbers caught. Absent where there are none.
   */
  catchRealTimeSignals?(caught: (signo: number) => void): number[];
  /** Gives the allocator's free pages back to the system, where that is a call (glibc). Absent elsewhere. */
  trimMemory?(): void;
  /**
   * Taken at start, before the first spawn: a way for the CLI to end with `code` at once, past Node's own exit
   * (its threads joined, stdio put back), which returns when stdio needs putting back. Undefined where not.
   */
  quickExit?(): ((code: number) => void) | undefined;
  /**
   * When gsup leads the session whose controlling terminal is on its stdin
   * (`docker run -it`): give that terminal up, and return the argv prefix
   * that makes it the controlling terminal of the command's new session
   * (setsid() and TIOCSCTTY between fork and exec, which Node cannot do).
   * Undefined when gsup does not own it; a string says why it cannot.
   * `expect` is told of each signal the release sent gsup itself.
   */
  handOverTerminal?(expect: (signal: SignalName) => void): string[] | string | undefined;
  /**
   * The command started without a fork (posix_spawn): its pid, which gsup reaps itself (libuv never hears of
   * it); an errno name when it failed (no program ran); undefined where it cannot be done so. Absent elsewhere.
   */
  spawnProcess?(request: SpawnRequest): number | string | undefined;
  /** Has gsup any child at all (alive or zombie)? In O(1); absent (or undefined) where unknown. */
  hasChildren?(): boolean | undefined;
  /**
   * gsup's own children (all threads'), cheaply; undefined when it cannot be
   * told so (Linux without /proc/PID/task/TID/children); absent where that
   * needs a full look.
   */
  ownChildren?(): number[] | undefined;
  /**
   * Has gsup a live child that is not in `known` and not in the group `pgid`?
   * Cheaply, and with next to no garbage (the signal path asks); undefined
   * when it cannot be told so, absent where that needs a full look.
   */
  childOutside?(known: ReadonlySet<number>, pgid: number | undefined): boolean | undefined;
  /**
   * Reap one zombie child of gsup in O(1), never one in `keep` (Node's own):
   * 'none' when there is none, 'blocked' when the next one is Node's.
   */
  reapOne?(keep: Pick<ReadonlySet<number>, 'has' | 'size'>): ReapedChild | 'none' | 'blocked';
  /** Reap gsup's zombie children, but never those in `keep`, by a walk of them all (past a 'blocked'). */
  reapZombies?(keep: Pick<ReadonlySet<number>, 'has' | 'size'>): ReapResult;
  /** Does this pid run as the user gsup runs as (real and effective uid)? Absent where unknown. */
  ownerMatches?(pid: number): boolean;
  /**
   * gsup has no permission to signal this process (EPERM: another user's, and gsup without CAP_KILL over it);
   * false when it may, or the process is gone. Absent where unknown.
   */
  signalDenied?(pid: number): boolean;
  /**
   * The user and group this pid runs as; undefined when it is gone or its
   * real and effective ids differ. Absent where unknown.
   */
  processUser?(pid: number): Promise<ProcessUser | undefined>;
  /**
   * The value of `name` in the environment a process started with, read
   * without blocking gsup: found, absent, unreadable (gsup may not read it)
   * or gone. Absent where unknown.
   */
  environValue?(pid: number, name: string): Promise<EnvironRead>;
  /** The memory cgroup gsup is in (Linux: v1 or v2), found once; undefined where there is none. */
  ownMemoryCgroup?(): Promise<MemoryCgroup | undefined>;
  /**
   * A memory cgroup's OOM kill count (limit, peak) now, read asynchronously; undefined when unreadable.
   * `countOnly`: the count alone.
   */
  readMemoryCgroup?(cgroup: MemoryCgroup, countOnly?: boolean): Promise<OomReading | undefined>;
  /**
   * An AF_UNIX datagram socket for sd_notify (`READY=1`), in a private
   * folder; `heard` gets each datagram's text. Returns why not as a string;
   * absent where there is none.
   */
  openNotifySocket?(heard: (text: string) => void): NotifySocket | string;
  /** Held sockets (--listen); absent where gsup cannot hold them. */
  readonly sockets?: HeldSocketCalls;
  /** Which processes of `root`'s tree take one of these socket inodes now (epoll, accept); absent where unknown. */
  socketTakers?(root: number, inodes: ReadonlySet<number>): Promise<Array<{ pid: number; ino: number }>>;
  /**
   * The exec step that puts LISTEN_PID (the command's own pid) in the command's environment: an argv
   * prefix before the command, a shell's (`sh -c 'LISTEN_PID=$$ exec "$0" "$@"'`), or where there is no
   * shell gsup's own exec helper (a node: `helper`). Why not, as a string.
   */
  listenPidStep?(): { argv: string[]; helper: boolean } | string;
  /** Force-stop a whole tree where signals are not available (Windows). */
  killTree?(pid: number): Promise<void>;
}

export function isAlive(info: ProcessInfo | undefined): info is ProcessInfo {
  // A zombie still answers kill(pid, 0), but it is dead: only its parent's
  // wait() is missing.
  return info !== undefined && info.state !== 'Z' && info.state !== 'X' && info.state !== 'x';
}
