import type { Children } from '../children/children.js';
import type { CommandRun } from '../children/run.js';
import { betweenRuns, endAwaitsExit } from '../machine/queries.js';
import type { State } from '../machine/state.js';
import type { Timers } from './timers.js';

// While signals flood in (this many since the last check), the command's state is checked this
// often: a full signal pipe drops SIGCHLD too, and its exit must never go unnoticed.
const FLOOD_SIGNALS = 64;
const CHECK_MS = 50;

/** The watch for a lost SIGCHLD, while signals come in or the command's exit is awaited (the `check` timer). */
export class LostChildWatch {
  private signalsSinceCheck = 0;

  constructor(
    private readonly timers: Timers,
    private readonly children: Children,
  ) {}

  /** A signal came in: a burst can fill the signal pipe, and a SIGCHLD in it be lost; then check now and then. */
  signalled(): void {
    if (++this.signalsSinceCheck >= FLOOD_SIGNALS) this.timers.ensure('check', CHECK_MS);
  }

  /** A child of Node's waits to be reaped (libuv may have missed its SIGCHLD): check soon. */
  soon(): void {
    this.timers.ensure('check', CHECK_MS);
  }

  /** The check: libuv is nudged if the command is a zombie it was not told of; `reap` reaps the rest. */
  async check(run: CommandRun, state: State, reap: () => void): Promise<void> {
    const gone = !betweenRuns(state) && (await this.children.nudgeIfLost(run));
    reap();
    if (gone || this.signalsSinceCheck >= FLOOD_SIGNALS || endAwaitsExit(state)) this.timers.set('check', CHECK_MS);
    this.signalsSinceCheck = 0;
  }
}
