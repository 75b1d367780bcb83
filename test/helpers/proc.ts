// The /proc readers are the benchmark's (one copy: bench/lib/proc.js).
export { allProcs, commandLine, isAlive, readProc, related, type Proc } from '../../bench/lib/proc.js';

/** Polls `condition` until it holds, or fails after `timeoutMs` saying what it waited for. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** SIGKILL to each of these pids (a test's own children), emptying the list; one already gone is fine. */
export function killPids(pids: number[]): void {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
}
