import { readdirSync, readFileSync } from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
}

export function readProc(pid: number): Proc | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]) };
  } catch {
    return undefined;
  }
}

/** A process's command line, its arguments joined by spaces ('' once it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** Alive means present and not a zombie (a zombie still answers kill(pid, 0)). */
export function isAlive(pid: number): boolean {
  const proc = readProc(pid);
  return proc !== undefined && proc.state !== 'Z' && proc.state !== 'X';
}

export function allProcs(): Proc[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => readProc(Number(entry)) ?? []);
}

/** Every live process below `root`, and every process in the given sessions or groups. */
export function related(roots: number[], sessions: number[] = []): Proc[] {
  const procs = allProcs();
  const found = new Map<number, Proc>();
  const wanted = new Set(roots);
  const ids = new Set(sessions);
  let grew = true;
  while (grew) {
    grew = false;
    for (const proc of procs) {
      if (found.has(proc.pid)) continue;
      if (wanted.has(proc.pid) || found.has(proc.ppid) || ids.has(proc.sid) || ids.has(proc.pgid)) {
        found.set(proc.pid, proc);
        grew = true;
      }
    }
  }
  return [...found.values()].filter((proc) => proc.state !== 'Z');
}

/** Polls `condition` until it holds, or fails after `timeoutMs` saying what it waited for. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
