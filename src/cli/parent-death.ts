import type { Logger } from '../output/log.js';
import type { Platform, SignalName } from '../platform/index.js';
import { signalNumber } from '../platform/signals.js';

/**
 * `-p SIGNAL` (tini's): the kernel sends gsup `signal` when its parent dies,
 * and it comes in as any received signal (a stop signal stops the tree,
 * another is forwarded). A parent that died between gsup's first line
 * (`startPpid`) and the request would never send it: gsup's parent has
 * changed then (to 1, or a subreaper), and the signal counts as received
 * now. Where the kernel cannot be asked: one warning, and gsup runs on.
 */
export function askForParentDeath(
  signal: SignalName,
  startPpid: number,
  platform: Platform,
  logger: Logger,
  receive: (signal: SignalName) => void,
  ppid: () => number = () => process.ppid,
): void {
  const why = platform.askParentDeathSignal
    ? platform.askParentDeathSignal(signalNumber(signal))
    : `not on ${process.platform} (Linux only)`;
  if (why !== undefined) {
    const message = `-p ${signal}: gsup cannot ask for a signal on its parent's death: ${why}`;
    logger.warn('no-pdeathsig', message, { signal, reason: why });
    return;
  }
  const now = ppid();
  if (now === startPpid) return;
  receive(signal);
  const message = `gsup's parent (pid ${startPpid}) died before -p ${signal} was asked for: ${signal} received`;
  logger.warn('parent-died', message, { signal, ppid: startPpid });
}
