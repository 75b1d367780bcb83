import type { Logger } from '../../output/log.js';
import type { SignalName } from '../../platform/index.js';
import { takeOwnSigpipe } from '../../platform/sigpipe.js';
import { JOB_CONTROL_SIGNALS, STOP_SIGNALS } from '../../platform/signals.js';
import type { TargetMode } from '../tree/targets.js';
import type { EventQueue } from './queue.js';

/** What a received signal means to the supervision, once gsup's own signals are taken out and the rules applied. */
export type Intake =
  | { kind: 'stop'; signal: SignalName; reason: string }
  /** The reload signal (--reload-signal): never forwarded; a new run starts beside the serving one. */
  | { kind: 'reload'; reason: string }
  | { kind: 'forward'; signal: SignalName | null; suspend: boolean }
  | { kind: 'none' };

const NONE: Intake = { kind: 'none' };

/** A stop: SIGTERM or SIGINT, or one a rule made SIGKILL (`-r TERM:KILL`: the tree is killed at once). */
function stops(received: SignalName, signal: SignalName): boolean {
  return STOP_SIGNALS.has(signal) || (signal === 'SIGKILL' && STOP_SIGNALS.has(received));
}

/**
 * gsup's ears, O(1) per signal: the signals it caused itself (the pipe probe,
 * giving the terminal up, a SIGPIPE of its own failed write on stderr or a
 * socket) are not forwarded; the rest are rewritten once, here, and sorted
 * into stop signals and signals to forward.
 */
export class SignalIntake {
  /** Signals gsup caused itself, not yet received. */
  private readonly own = new Map<SignalName, number>();
  /** Reload signals received before the first spawn, already told to the machine (which drops them). */
  private early = 0;

  constructor(
    private readonly rules: ReadonlyMap<SignalName, SignalName | null>,
    private readonly mode: TargetMode,
    private readonly logger: Logger,
    /** --reload-signal: no rule rewrites it, and it is no stop or job control (the options see to that). */
    private readonly reload?: SignalName,
  ) {}

  expectOwn(signal: SignalName): void {
    this.own.set(signal, (this.own.get(signal) ?? 0) + 1);
  }

  /** The signal to send for one received (null: dropped by a rule). */
  rewrite(received: SignalName): SignalName | null {
    const rule = this.rules.get(received);
    if (rule !== undefined || this.rules.has(received)) return rule ?? null;
    // Ctrl+Z in group mode: the command's group is orphaned (its session is not gsup's), so the
    // kernel discards SIGTSTP, SIGTTIN and SIGTTOU for it; SIGSTOP stops it as a terminal would.
    if (this.mode === 'group' && JOB_CONTROL_SIGNALS.has(received)) return 'SIGSTOP';
    return received;
  }

  /**
   * The signal a stop asked for by the library (`stop(signal)`) goes out as:
   * rewritten as a received one would be, unless the rule drops it or makes
   * it no stop signal (a stop asked for is a stop; `signal()` is the received way).
   */
  stopRequested(signal: SignalName): SignalName {
    const rewritten = this.rewrite(signal);
    return rewritten !== null && stops(signal, rewritten) ? rewritten : signal;
  }

  /** Does this received signal stop the supervision (it goes first in the queue)? */
  isStop(received: SignalName): boolean {
    const signal = this.rewrite(received);
    return signal !== null && stops(received, signal) && !JOB_CONTROL_SIGNALS.has(received);
  }

  take(received: SignalName): Intake {
    if (received === 'SIGPIPE' && takeOwnSigpipe()) return NONE; // raised by a write of ours to a reader that is gone
    if (this.own.size > 0 && this.takeOwn(received)) return NONE; // the pipe probe; the terminal given up
    if (received === this.reload) {
      if (this.early === 0) return { kind: 'reload', reason: `${received} received` };
      this.early--;
      return NONE;
    }
    const signal = this.rewrite(received);
    // Job control: a rule replaces what the command gets (a stop signal included), never gsup's own
    // suspension (dumb-init's way).
    if (JOB_CONTROL_SIGNALS.has(received)) return { kind: 'forward', signal, suspend: true };
    if (signal === null) {
      this.logger.info('drop', `${received} received: dropped (rewrite)`, { received });
      return NONE;
    }
    if (stops(received, signal)) return { kind: 'stop', signal, reason: `${received} received` };
    return { kind: 'forward', signal, suspend: false };
  }

  /** Once the signal is out (forward first, log after): what a rule made of it. */
  note(received: SignalName, intake: Intake): void {
    if (intake.kind === 'none' || intake.kind === 'reload') return;
    if (JOB_CONTROL_SIGNALS.has(received) || intake.signal === received) return;
    if (!this.logger.enabled('debug')) return;
    this.logger.debug('rewrite', `${received} rewritten to ${intake.signal}`, { received, signal: intake.signal });
  }

  /**
   * A stop signal that came before the spawn (taken by Node's start-up
   * handler, or held): then there is no spawn. One the rules make no stop
   * signal (`-r TERM:USR1`) stops nothing: the command starts, and gets it
   * (held ones wait in the queue; the one Node's handler took joins them).
   */
  stopBeforeSpawn(swallowed: SignalName | undefined, queue: EventQueue): SignalName | undefined {
    for (const received of swallowed ? [swallowed, ...queue.signals()] : queue.signals()) {
      if (this.isStop(received)) return this.rewrite(received) ?? undefined;
    }
    if (swallowed) queue.push({ kind: 'signal', signal: swallowed });
    return undefined;
  }

  /**
   * Reload signals that came before the first spawn (held in the queue): each is told to the machine now, which
   * drops it with one line, and taken as nothing when the loop reaches it. Returns their reasons.
   */
  reloadsBeforeSpawn(queue: EventQueue): string[] {
    const early = queue.signals().filter((signal) => signal === this.reload);
    this.early += early.length;
    return early.map((signal) => `${signal} received`);
  }

  private takeOwn(signal: SignalName): boolean {
    const count = this.own.get(signal);
    if (!count) return false;
    if (count === 1) this.own.delete(signal);
    else this.own.set(signal, count - 1);
    return true;
  }
}
