import { binding } from '../../builtins.js';

/** Node's own signal handle (what `process.on(name)` makes), which takes any signal number libuv does. */
interface SignalHandle {
  onsignal: (signo: number) => void;
  start(signo: number): number;
  unref(): void;
  close(): void;
}

/**
 * The real-time signals (SIGRTMIN-SIGRTMAX: 34-64 with glibc, 35-64 with musl) caught, each number passed to
 * `caught` as it comes (on the loop, as any signal's listener). Node has no name for them, so `process.on` cannot
 * take them, and by default each ends the process it reaches: outside PID 1, gsup, leaving its tree running. The
 * numbers libc keeps for itself (32-33, 32-34) refuse a handler and are left alone. Returns the numbers caught.
 */
export function catchRealTimeSignals(caught: (signo: number) => void): number[] {
  const Signal = binding('signal_wrap')?.Signal;
  if (typeof Signal !== 'function') return [];
  const taken: number[] = [];
  for (let signo = 32; signo <= 64; signo++) {
    try {
      const handle = new (Signal as new () => SignalHandle)();
      handle.onsignal = () => caught(signo);
      if (handle.start(signo) !== 0) {
        handle.close();
        continue;
      }
      // Never keeps gsup alive by itself, and never removed: until gsup exits, none of them may end it.
      handle.unref();
      taken.push(signo);
    } catch {
      // not this Node's handle after all: left as they were
    }
  }
  return taken;
}
