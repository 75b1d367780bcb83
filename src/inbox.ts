import { swallowedStopSignal } from './platform/startup.js';
import type { SignalName } from './platform/types.js';
import { forwardableSignals } from './signals.js';

/**
 * gsup's ears, the first code the CLI runs (its own small bundle, loaded
 * before commander, chalk or koffi): a handler for every catchable signal,
 * which only records the signal. The engine attaches later and gets what
 * came in between, in order.
 */
export interface SignalInbox {
  /** Hands over every signal held so far, then each new one as it comes. */
  attach(listener: (signal: SignalName) => void): void;
  detach(): void;
  /** A stop signal Node's start-up handler took before these handlers were in place (PID 1). */
  readonly swallowed: SignalName | undefined;
}

export function listen(): SignalInbox {
  // Read before the handlers go in: once they are in, SigCgt has every bit.
  const swallowed = swallowedStopSignal();
  const held: SignalName[] = [];
  let listener: ((signal: SignalName) => void) | undefined;
  const signals = forwardableSignals();
  // The stop signals first: the window in which Node's one-shot handler can still take one is the shortest.
  signals.sort((a, b) => Number(b === 'SIGTERM' || b === 'SIGINT') - Number(a === 'SIGTERM' || a === 'SIGINT'));
  const removers = signals.map((signal) => {
    const handler = () => (listener ? listener(signal) : held.push(signal));
    process.on(signal, handler);
    return () => process.off(signal, handler);
  });
  return {
    swallowed,
    attach(next) {
      listener = next;
      for (const signal of held.splice(0)) next(signal);
    },
    detach() {
      for (const remove of removers) remove();
      listener = undefined;
    },
  };
}
