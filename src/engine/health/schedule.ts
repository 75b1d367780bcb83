import type { HealthChecks } from './checks.js';
import type { ProbeResult } from './probes.js';
import { probesCount, runOn } from '../machine/queries.js';
import type { Effect, Input, State } from '../machine/state.js';
import type { StatusBoard } from '../shell/status-board.js';
import type { Timers } from '../shell/timers.js';
import type { HealthState } from '../machine/values.js';

/**
 * The shell's side of the health checks: when rounds run (the `health`
 * timer), what the step asked of them, and each answer turned into an input
 * of the step (counted for /metrics).
 */
export class HealthSchedule {
  constructor(
    private readonly checks: HealthChecks,
    private readonly timers: Timers,
    private readonly status: StatusBoard | undefined,
  ) {}

  get state(): HealthState {
    return this.checks.state;
  }

  /**
   * A run started (or a reload handed over to it: `kept`, the verdict of the run it took over stays): the start
   * period begins again, the first round soon.
   */
  started(kept = false): void {
    this.checks.reset(Date.now(), kept);
    this.timers.set('health', this.checks.nextIntervalMs(Date.now()));
  }

  /** The step's health effects. */
  carryOut(effect: Extract<Effect, { kind: 'pause-health' | 'probe' | 'schedule-probe' }>): void {
    if (effect.kind === 'pause-health') {
      this.timers.clear('health');
      this.checks.pause();
    } else if (effect.kind === 'probe') this.checks.start(effect.run);
    else this.timers.set('health', this.checks.nextIntervalMs(Date.now()));
  }

  /**
   * A round answered: the input it makes, unless its run is over (or what it handed over to). While two runs
   * live the held socket answers for both: it counts for neither, and the next round comes on schedule.
   */
  answered(state: State, runId: number, result: ProbeResult): Input | undefined {
    if (!runOn(state) || runId !== state.run.id) return undefined;
    if (!probesCount(state)) {
      this.timers.set('health', this.checks.nextIntervalMs(Date.now()));
      return undefined;
    }
    if (this.status) this.status.healthChecks[result.ok ? 'pass' : 'fail']++;
    return { kind: 'health', run: runId, unhealthy: this.checks.judge(result, Date.now()) === 'unhealthy' };
  }
}
