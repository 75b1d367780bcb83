import type { Platform, SignalName } from './types.js';

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

/**
 * Where there are no pidfds (macOS, the BSDs, Windows): gsup's child held by
 * its number, signalled only while the caller knows it names the child.
 */
export const childByNumber: Pick<Platform, 'holdChild' | 'signalChild' | 'releaseChild'> = {
  holdChild: (pid) => ({ pid }),
  signalChild: (child, signal, group, byNumber) => byNumber && sendSignal(group ? -child.pid : child.pid, signal),
  releaseChild: () => {},
};
