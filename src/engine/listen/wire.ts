// The one contract between gsup (engine/listen/) and the preload that each Node
// process of a run loads under --listen (listen-preload.ts, a bundle of its own):
// what a process is handed, and what it says back. Both sides import this file.

/** The first held socket's fd; the others follow it (systemd's socket activation convention). */
export const FIRST_FD = 3;

/** systemd's variables: how many held sockets at fds 3…, their names (`:`-separated), and whose they are. */
export const LISTEN_FDS = 'LISTEN_FDS';
export const LISTEN_FDNAMES = 'LISTEN_FDNAMES';
export const LISTEN_PID = 'LISTEN_PID';

/** More than this is no count of sockets (an fd table's numbers are not searched on a variable's word). */
const MOST_HANDED = 1024;

/**
 * How many fds at 3… the environment hands to the process `pid` (systemd's rule: LISTEN_PID is its pid, else
 * they are not its); 0 when none.
 */
export function handedCount(env: NodeJS.ProcessEnv, pid: number): number {
  if (env[LISTEN_PID] !== String(pid)) return 0;
  const count = /^\d{1,4}$/.test(env[LISTEN_FDS] ?? '') ? Number(env[LISTEN_FDS]) : 0;
  return count <= MOST_HANDED ? count : 0;
}

/**
 * Which fds are held sockets, in fd order, `,`-separated: `DEV:INO@ADDRESS` each (fstat's device and inode
 * of the socket, the address as bound: `[::]:8080`, `0.0.0.0:8080`, `127.0.0.1:9000`). A process trusts
 * fds 3… only after fstat matches every entry; the names are LISTEN_FDNAMES'.
 */
export const LISTEN_ID = 'GSUP_LISTEN_ID';

/**
 * The run's report channel: one end of a socketpair, at the fd right after the held sockets
 * (3 + LISTEN_FDS; not counted in LISTEN_FDS), handed on with them. Node's IPC channel, where gsup
 * gives one, comes after it.
 */
export const REPORT_FD = 'GSUP_REPORT_FD';

/** The contract's variables, all of them: what a process that trusts none of its fds keeps none of. */
export const VARIABLES = [LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID, LISTEN_ID, REPORT_FD] as const;

/** A word on the report channel: one JSON object per line. */
export type ReportWord =
  /** The process `pid` took the held socket `name` (its first listen on it). */
  | { word: 'listen'; name: string; pid: number }
  /** The process `pid` closed its server on the held socket `name`. */
  | { word: 'close'; name: string; pid: number }
  /** The process `pid`, told a word by gsup, holds `count` connections on its held sockets (then as it changes). */
  | { word: 'conns'; pid: number; count: number };

/**
 * gsup's words to a run (the other way on the same channel), one a line, each read by one process that took a
 * held socket (which then reads no more: a word per such process):
 * - `drain`: a reload's old run — stop accepting on the held sockets in this process alone, answer every further
 *   request with `Connection: close` (HTTP/2: GOAWAY), say its connections (`conns`) as they go;
 * - `closing`: the final stop's delay — keep accepting, but answer with `Connection: close` (says `conns` once).
 */
export type TellWord = 'drain' | 'closing';

export const TELL_WORDS: readonly TellWord[] = ['drain', 'closing'];

/** One line gsup writes on a run's report channel. */
export function tellLine(word: TellWord): string {
  return `${JSON.stringify({ word })}\n`;
}

/** A line gsup wrote, or undefined when it is none of its words. */
export function parseTell(line: string): TellWord | undefined {
  try {
    const word = (JSON.parse(line) as { word?: unknown } | null)?.word;
    return TELL_WORDS.find((known) => known === word);
  } catch {
    return undefined;
  }
}

/** One line for the report channel. */
export function reportLine(word: ReportWord): string {
  return `${JSON.stringify(word)}\n`;
}

/** A line read from the report channel, or undefined when it is not a word (never trusted further). */
export function parseReport(line: string): ReportWord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { word, name, pid, count } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(pid)) return undefined;
  if (word === 'conns') {
    if (!Number.isSafeInteger(count) || (count as number) < 0) return undefined;
    return { word, pid: pid as number, count: count as number };
  }
  if ((word !== 'listen' && word !== 'close') || typeof name !== 'string') return undefined;
  return { word, name, pid: pid as number };
}

/** One entry of GSUP_LISTEN_ID: fstat's device and inode of a held socket (decimal), and its address as bound. */
export interface ListenId {
  dev: string;
  ino: string;
  address: string;
}

/** `DEV:INO@ADDRESS`, one entry of GSUP_LISTEN_ID (entries are joined with `,`). */
export function listenIdEntry(id: ListenId): string {
  return `${id.dev}:${id.ino}@${id.address}`;
}

/** GSUP_LISTEN_ID's entries in fd order, or undefined when any entry is malformed (then none is trusted). */
export function parseListenIds(value: string): ListenId[] | undefined {
  const ids: ListenId[] = [];
  for (const entry of value.split(',')) {
    const match = /^(\d+):(\d+)@(\S+)$/.exec(entry);
    if (!match) return undefined;
    ids.push({ dev: match[1], ino: match[2], address: match[3] });
  }
  return ids;
}
