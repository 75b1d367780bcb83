// The preload's process: what it holds, what it says on stderr, and what it tells gsup on the report channel.
import { fstatSync, writeSync } from 'node:fs';
import { reportLine, type ReportWord } from '../engine/listen/wire.js';
import type { Fstat, Held, HeldSocket } from './held.js';

export interface Holder {
  held: Held;
  /** The contract's variables as this process has them (LISTEN_PID its own): what its children are handed. */
  handed: Record<string, string>;
  /** The held sockets this process took, by fd: a process that took one hands none on. */
  taken: Map<number, 'listening' | 'closed'>;
  /** This preload's own file, for a child's NODE_OPTIONS. */
  path: string;
  /** What has been said already (each thing once). */
  said: Set<string>;
  /** The report channel's end was read (gsup gone): its fd is no longer this process's to write to. */
  unheard?: boolean;
}

// Numbers, as gsup wrote them (engine/listen/held.ts): a socket's inode and sockfs' device are far below 2^53, and
// the bigint form costs a Node start of a run ~0.1 ms more.
export const fstat: Fstat = (fd) => {
  try {
    const stat = fstatSync(fd);
    return { dev: String(stat.dev), ino: String(stat.ino), socket: stat.isSocket() };
  } catch {
    return undefined;
  }
};

/** One line on stderr, written at once (a preload's line must not wait for an event loop the app may block). */
export function say(message: string): void {
  try {
    writeSync(2, `[gsup] listen preload (pid ${process.pid}): ${message}\n`);
  } catch {
    // stderr closed or full: the app runs on
  }
}

/** say(), once per `key` in this process. */
export function sayOnce(holder: Holder, key: string, message: string): void {
  if (holder.said.has(key)) return;
  holder.said.add(key);
  say(message);
}

/** A word on the run's report channel (a socketpair end: one small write, never waited for). */
export function report(holder: Holder, word: 'listen' | 'close', socket: HeldSocket): void {
  toGsup(holder, { word, name: socket.name, pid: process.pid }, `its ${word} on ${socket.name}`);
}

/** How many connections this process holds on its held sockets (told a word by gsup). */
export function reportConns(holder: Holder, count: number): void {
  toGsup(holder, { word: 'conns', pid: process.pid, count }, 'its connections');
}

function toGsup(holder: Holder, word: ReportWord, what: string): void {
  const fd = holder.held.reportFd;
  if (fd === undefined || holder.unheard) return;
  try {
    writeSync(fd, reportLine(word));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    sayOnce(holder, 'report', `could not tell gsup of ${what} (${code})`);
  }
}
