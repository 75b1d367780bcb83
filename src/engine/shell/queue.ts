import type { SignalName } from '../../platform/index.js';
import type { ProbeResult } from '../health/probes.js';
import type { HeldInput } from '../machine/state.js';
import type { TimerName } from '../machine/step.js';
import type { CommandExit, Snapshot } from '../machine/values.js';

/** Everything that can happen to a supervision, as values: the loop handles one at a time. */
export type EngineEvent =
  | { kind: 'signal'; signal: SignalName } // gsup received it (before rewriting)
  | { kind: 'stop'; signal: SignalName; reason: string } // the library asked for a stop
  | { kind: 'command-exit'; run: number; exit: CommandExit } // the command of run N ended
  | { kind: 'child' } // SIGCHLD: reap, look again
  | { kind: 'looked'; snapshot: Snapshot } // a look at the tree finished
  | { kind: 'timer'; name: TimerName }
  | { kind: 'health'; run: number; result: ProbeResult } // the health probes of run N answered
  | { kind: 'app-said'; run: number; word: 'ready' | 'stopping'; via: string } // --wait-ready: the app of run N said
  | { kind: 'held'; input: HeldInput } // --listen: a run's word on its report channel, or what the kernel showed
  | { kind: 'fault'; error: unknown };

/**
 * The one serial queue of a supervision. An event that is already waiting is
 * not added twice (the kernel merges pending standard signals the same way),
 * so a flood costs one entry per kind of signal; urgent events (stop signals,
 * the command's exit) go before the rest.
 */
export class EventQueue {
  private readonly events: EngineEvent[] = [];
  /**
   * Whether an event of each merging kind waits. Never deleted from: the keys
   * are few, and a Map that empties makes V8 a new table each time (in the
   * old generation, once the Map is there), one for every event.
   */
  private readonly waiting = new Map<string, boolean>();

  constructor(
    private readonly urgent: (event: EngineEvent) => boolean,
    /** Called after each push: the loop runs if it is idle. */
    private readonly pushed: () => void = () => {},
  ) {}

  push(event: EngineEvent): void {
    const key = mergeKey(event);
    if (key !== undefined) {
      if (this.waiting.get(key)) return;
      this.waiting.set(key, true);
    }
    if (this.urgent(event)) {
      const at = this.events.findIndex((queued) => !this.urgent(queued));
      this.events.splice(at < 0 ? this.events.length : at, 0, event);
    } else this.events.push(event);
    this.pushed();
  }

  /** The next event, or undefined when none is queued. */
  take(): EngineEvent | undefined {
    const event = this.events.shift();
    if (event === undefined) return undefined;
    const key = mergeKey(event);
    if (key !== undefined) this.waiting.set(key, false);
    return event;
  }

  /** The signals waiting, in order (those held before the spawn). */
  signals(): SignalName[] {
    return this.events.flatMap((event) => (event.kind === 'signal' ? [event.signal] : []));
  }

  get length(): number {
    return this.events.length;
  }
}

/** Events that carry no more than their kind merge with a waiting twin (the names are apart: SIG…, child, timers). */
function mergeKey(event: EngineEvent): string | undefined {
  if (event.kind === 'signal') return event.signal;
  if (event.kind === 'child') return 'child';
  if (event.kind === 'timer') return event.name;
  return undefined;
}
