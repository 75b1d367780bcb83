import type { SignalName } from './types.js';

/** kill(2) through Node, answering false (not throwing) when the target is gone. */
export function sendSignal(pid: number, signal: SignalName): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return false;
    throw error;
  }
}

/** SIGCHLD as a wake-up; Node/libuv keeps its own SIGCHLD handling for the children it spawned. */
export function watchSigchld(listener: () => void): () => void {
  process.on('SIGCHLD', listener);
  return () => process.off('SIGCHLD', listener);
}
