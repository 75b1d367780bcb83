import type { Carried } from './apart.js';
import { handOverStopSignals } from '../platform/linux/process/stop-handover.js';
import type { SignalName } from '../platform/types.js';
import { forwardableSignals } from '../platform/signals.js';

/**
 * gsup's ears, the first code the CLI runs (its own small bundle, loaded
 * before commander, chalk or koffi): a handler for every catchable signal,
 * which only records the signal. The engine attaches later and gets what
 * came in between, in order.
 */
export interface SignalInbox {
  /** Hands over every signal held so far, then each new one as it comes. */
  attach(listener: (signal: SignalName) => void): void;
  /** A stop signal Node's start-up handler took before these handlers were in place (PID 1). */
  readonly swallowed: SignalName | undefined;
  /** Why gsup could not leave the app's NODE_OPTIONS behind (apart.ts), when it could not. */
  readonly together?: string;
  /** A preload in NODE_OPTIONS listened for stop signals: one sent while it loaded may never have reached gsup. */
  readonly preloadListens?: boolean;
  /** gsup's parent when gsup's first line ran. */
  readonly ppid: number;
  /** A signal treated as received (the parent-death signal, when the parent died before it was asked for). */
  receive(signal: SignalName): void;
}

export { apart } from './apart.js';

/**
 * What bin/gsup.cjs caught before any module loaded (every forwardable signal but the stop signals): held in
 * order, until `taken` (its listeners then pass every signal on to the inbox's own, and hold nothing).
 */
export interface EarlySignals {
  held: SignalName[];
  taken: boolean;
}

export function listen(carried: Carried = { held: [], armed: false }, early?: EarlySignals): SignalInbox {
  const held: SignalName[] = [...carried.held];
  let listener: ((signal: SignalName) => void) | undefined;
  const receive = (signal: SignalName) => (listener ? listener(signal) : held.push(signal));
  // Never removed: until gsup exits, no signal may find it without a handler (as PID 1 or not).
  const on = (signal: SignalName) => process.on(signal, () => receive(signal));
  const stops: SignalName[] = ['SIGTERM', 'SIGINT'];
  // Every other signal first: that loads Node's signal machinery, so the stop
  // handlers replace Node's start-up one at once (see handOverStopSignals).
  for (const signal of forwardableSignals()) if (!stops.includes(signal)) on(signal);
  const swallowed = handOverStopSignals(() => stops.forEach(on), import.meta.url, carried.armed);
  // Taken over at once, in this same synchronous turn (no signal is handed out meanwhile): early ones first. The
  // early listeners stay (a signal's last listener gone, Node would give it its default action back), doing nothing.
  if (early) {
    held.unshift(...early.held.splice(0));
    early.taken = true;
  }
  return {
    swallowed,
    together: carried.together,
    preloadListens: carried.preloadListens,
    ppid: carried.ppid ?? process.ppid,
    receive,
    attach(next) {
      listener = next;
      for (const signal of held.splice(0)) next(signal);
    },
  };
}
