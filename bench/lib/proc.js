// Readers of /proc, for the benchmark and the tests (test/helpers/proc.ts
// re-exports them): one copy of each.
import { readdirSync, readFileSync } from 'node:fs';

/** A process as /proc/PID/stat shows it, or undefined when it is gone. */
export function readProc(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]) };
  } catch {
    return undefined;
  }
}

/** Alive means present and not a zombie (a zombie still answers kill(pid, 0)). */
export function isAlive(pid) {
  const proc = readProc(pid);
  return proc !== undefined && proc.state !== 'Z' && proc.state !== 'X';
}

/** A process's command line, its arguments joined by spaces ('' once it is gone). */
export function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

export function allProcs() {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => readProc(Number(entry)) ?? []);
}

/** Every live process below `roots` (the roots too), and every process in the given sessions or groups. */
export function related(roots, sessions = []) {
  const procs = allProcs();
  const found = new Map();
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

/** Every live process below `root`, without it. */
export const descendants = (root) => related([root]).filter((proc) => proc.pid !== root);

/** The direct children of `pid` (every thread's), from /proc/PID/task/TID/children. */
export function childrenOf(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** A `kB` field of /proc/PID/status (VmRSS, VmHWM, RssAnon) in MiB; NaN when the process is gone. */
export function statusMiB(pid, field) {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Whether `pid` has a handler for signal number `signo` (SigCgt of /proc/PID/status). */
export function catches(pid, signo) {
  try {
    const mask = /SigCgt:\s+([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? '0';
    return ((BigInt(`0x${mask}`) >> BigInt(signo - 1)) & 1n) === 1n;
  } catch {
    return false;
  }
}

/** CPU time of every thread of a process, in ms (schedstat: nanoseconds on CPU). */
export function cpuMs(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'latin1').split(' ')[0]) / 1e6;
    } catch {
      // the thread ended
    }
  }
  return total;
}
