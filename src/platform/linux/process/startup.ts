import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { SignalName } from '../../types.js';

/**
 * A stop signal that Node's own start-up handler took before gsup's first
 * line ran. Node installs a one-shot SIGINT/SIGTERM handler (it restores the
 * terminal, then re-raises with the default action); as PID 1 the re-raise is
 * ignored, so the signal is gone, but the handler is gone too: its bit is
 * missing from SigCgt in /proc/self/status. Undefined where that cannot be
 * read (not Linux) or nothing was taken.
 */
export function swallowedStopSignal(): SignalName | undefined {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'latin1');
  } catch {
    return undefined;
  }
  const match = /^SigCgt:\s*([0-9a-f]+)$/im.exec(status);
  if (!match) return undefined;
  const caught = BigInt(`0x${match[1]}`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    if ((caught & (1n << BigInt(constants.signals[signal] - 1))) === 0n) return signal;
  }
  return undefined;
}
