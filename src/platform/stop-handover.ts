import { constants } from 'node:os';
import { limitMallocArenas, loadKoffi, loadLibc } from './koffi.js';
import { swallowedStopSignal } from './startup.js';
import type { SignalName } from './types.js';

/**
 * Installs gsup's SIGTERM/SIGINT handlers (`install`) in place of Node's
 * start-up one, and says which stop signal that one took first, if any.
 *
 * Why it matters as PID 1 only: Node's start-up handler re-raises the signal
 * with the default action, which kills any other process (nothing lost) but is
 * ignored by a namespace's init. Reading SigCgt, then installing, leaves a
 * window between the two; a preempted gsup stretches it to a time slice. So
 * PID 1 swaps the handlers atomically with sigaction(2): first to a marker (the
 * libc function alarm, called with the signal's number: 15 or 2 seconds), whose
 * old value says whether Node's handler already fired; then to libuv's; then
 * alarm(0) says whether the marker fired in between. Nothing is left to chance.
 */
export function handOverStopSignals(install: () => void, moduleUrl: string): SignalName | undefined {
  const marker = process.platform === 'linux' && process.pid === 1 && process.env.GSUP_FFI !== '0' ? loadMarker(moduleUrl) : undefined;
  if (!marker) {
    const swallowed = swallowedStopSignal();
    holdForTest(); // here a stop signal Node's handler takes is lost: the window the marker closes
    install();
    return swallowed;
  }
  let swallowed: SignalName | undefined;
  for (const signal of STOPS) if (marker.swap(signal)) swallowed ??= signal;
  holdForTest();
  install();
  const left = marker.alarm(0);
  if (left > 0) swallowed ??= left > constants.signals.SIGINT ? 'SIGTERM' : 'SIGINT';
  return swallowed;
}

const STOPS = ['SIGTERM', 'SIGINT'] as const;

interface Marker {
  /** Puts the marker in as the signal's handler; true when the handler it replaced was the default (Node's fired). */
  swap(signal: SignalName): boolean;
  alarm(seconds: number): number;
}

// glibc's and musl's struct sigaction on x64 and arm64: handler, 128-byte mask, flags, restorer.
const SIGACTION_SIZE = 152;
const MASK_OFFSET = 8;
const MASK_SIZE = 128;

function loadMarker(moduleUrl: string): Marker | undefined {
  if (process.arch !== 'x64' && process.arch !== 'arm64') return undefined;
  try {
    const koffi = loadKoffi(moduleUrl);
    const libc = loadLibc(koffi);
    limitMallocArenas(libc); // here, before most of Node's threads first allocate
    const sigaction = libc.func('int sigaction(int, void *, _Out_ void *)');
    const alarm = libc.func('unsigned int alarm(unsigned int)') as (seconds: number) => number;
    const dlsym = libc.func('void *dlsym(void *, const char *)');
    const alarmAddress = koffi.address(dlsym(null, 'alarm')) as bigint;
    // An alarm already set (kept across exec): the marker could not be told from it.
    const pending = alarm(0);
    if (pending > 0 || alarmAddress === 0n) {
      alarm(pending);
      return undefined;
    }
    const action = Buffer.alloc(SIGACTION_SIZE);
    action.writeBigUInt64LE(alarmAddress, 0);
    action.fill(0xff, MASK_OFFSET, MASK_OFFSET + MASK_SIZE); // nothing else interrupts it
    return {
      swap(signal) {
        const old = Buffer.alloc(SIGACTION_SIZE);
        // It cannot fail for these two; if it did, nothing changed, and install() follows anyway.
        return sigaction(constants.signals[signal], action, old) === 0 && old.readBigUInt64LE(0) === 0n; // SIG_DFL
      },
      alarm,
    };
  } catch {
    return undefined; // no koffi here: the SigCgt read
  }
}

/** Tests only: keeps the window between the two swaps open, so a test can send a signal into it. */
function holdForTest(): void {
  const ms = Number(process.env.GSUP_TEST_HOLD_HANDOVER_MS);
  if (!(ms > 0)) return;
  process.stderr.write('gsup: (test) stop handlers being handed over\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
