import { constants } from 'node:os';
import { limitMallocArenas, loadKoffi, loadLibc } from '../koffi.js';
import { swallowedStopSignal } from './startup.js';
import type { SignalName } from '../../types.js';

/**
 * Installs gsup's SIGTERM/SIGINT handlers (`install`) in place of Node's
 * start-up one, and says which stop signal that one took first, if any.
 *
 * Why it matters as PID 1: Node's start-up handler re-raises the signal with
 * the default action, which kills any other process (nothing lost) but is
 * ignored by a namespace's init. Reading SigCgt, then installing, leaves a
 * window between the two; a preempted gsup stretches it to a time slice. So
 * PID 1 swaps the handlers atomically with sigaction(2): first to a marker (the
 * libc function alarm, called with the signal's number: 15 or 2 seconds), whose
 * old value says whether Node's handler already fired; then to libuv's; then
 * alarm(0) says whether the marker fired in between. Nothing is left to chance.
 *
 * `armed`: the process gsup replaced to leave the app's NODE_OPTIONS behind
 * (apart.ts) put the marker in, and its alarm lives on across execve(2): what
 * is left of it is a stop signal taken on the way.
 *
 * Last, what the kernel will call is checked: a stop signal whose handler is
 * not libuv's (a preload's signal handle kept the marker in place, because
 * Node then installs nothing) gets libuv's, copied from `reference`, a signal
 * `install` or the caller handled before.
 */
export function handOverStopSignals(
  install: () => void,
  moduleUrl: string,
  armed = false,
  reference: SignalName = 'SIGHUP',
): SignalName | undefined {
  const linux = process.platform === 'linux' && process.env.GSUP_FFI !== '0';
  const marker = linux && (process.pid === 1 || armed) ? loadMarker(moduleUrl, process.pid === 1) : undefined;
  const pending = marker?.alarm(0) ?? 0;
  if (!marker || (pending > 0 && !armed)) {
    // No koffi, not PID 1, or an alarm of someone else's kept across exec (the marker could not be told from it).
    if (pending > 0) marker?.alarm(pending);
    const swallowed = swallowedStopSignal();
    install(); // a stop signal Node's handler takes just before this is lost: the window the marker closes
    return swallowed;
  }
  let swallowed = signalOfAlarm(pending);
  for (const signal of STOPS) if (marker.swap(signal)) swallowed ??= signal;
  install();
  swallowed ??= signalOfAlarm(marker.alarm(0));
  for (const signal of STOPS) marker.ensureSameHandler(signal, reference);
  return swallowed;
}

const STOPS = ['SIGTERM', 'SIGINT'] as const;

/** What the marker's alarm says: 15 seconds (or less, since) for SIGTERM, 2 for SIGINT, 0 for nothing. */
function signalOfAlarm(left: number): SignalName | undefined {
  return left > constants.signals.SIGINT ? 'SIGTERM' : left > 0 ? 'SIGINT' : undefined;
}

export interface Marker {
  /** Puts the marker in as the signal's handler; true when the handler it replaced was the default (Node's fired). */
  swap(signal: SignalName): boolean;
  alarm(seconds: number): number;
  /** Gives `signal` the action of `reference` when their handlers differ (the kernel would call another one). */
  ensureSameHandler(signal: SignalName, reference: SignalName): void;
}

// glibc's and musl's struct sigaction on x64 and arm64: handler, 128-byte mask, flags, restorer.
const SIGACTION_SIZE = 152;
const MASK_OFFSET = 8;
const MASK_SIZE = 128;

/** The marker; `first`: gsup's first native call as PID 1 (one malloc arena, before Node's threads allocate). */
export function loadMarker(moduleUrl: string, first = false): Marker | undefined {
  if (process.arch !== 'x64' && process.arch !== 'arm64') return undefined;
  try {
    const koffi = loadKoffi(moduleUrl);
    const libc = loadLibc(koffi);
    if (first) limitMallocArenas(libc);
    const sigaction = libc.func('int sigaction(int, void *, _Out_ void *)');
    const alarm = libc.func('unsigned int alarm(unsigned int)') as (seconds: number) => number;
    const dlsym = libc.func('void *dlsym(void *, const char *)');
    const alarmAddress = koffi.address(dlsym(null, 'alarm')) as bigint;
    if (alarmAddress === 0n) return undefined;
    const action = Buffer.alloc(SIGACTION_SIZE);
    action.writeBigUInt64LE(alarmAddress, 0);
    action.fill(0xff, MASK_OFFSET, MASK_OFFSET + MASK_SIZE); // nothing else interrupts it
    const current = (signal: SignalName) => {
      const old = Buffer.alloc(SIGACTION_SIZE);
      sigaction(constants.signals[signal], null, old);
      return old;
    };
    return {
      swap(signal) {
        const old = Buffer.alloc(SIGACTION_SIZE);
        // It cannot fail for these two; if it did, nothing changed, and install() follows anyway.
        return sigaction(constants.signals[signal], action, old) === 0 && old.readBigUInt64LE(0) === 0n; // SIG_DFL
      },
      alarm,
      ensureSameHandler(signal, reference) {
        const wanted = current(reference);
        // SIG_DFL or SIG_IGN as the reference: nothing of libuv's to copy.
        if (wanted.readBigUInt64LE(0) <= 1n || current(signal).readBigUInt64LE(0) === wanted.readBigUInt64LE(0)) return;
        sigaction(constants.signals[signal], wanted, null);
      },
    };
  } catch {
    return undefined; // no koffi here: the SigCgt read
  }
}
