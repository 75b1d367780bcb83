import type { Logger } from '../../output/log.js';
import { HealthVerdicts, probeAll } from './probes.js';
import type { HealthConfig, ProbeContext, ProbeResult } from './probes.js';
import type { HealthState } from '../machine/values.js';

/**
 * The health checks of one supervision: one probe round at a time, its
 * result handed back (as an event of the loop), judged by Docker's rules and
 * logged (-v: every result; otherwise changes of state). The supervisor
 * decides when to probe and what an unhealthy verdict does.
 */
export class HealthChecks {
  private readonly verdicts: HealthVerdicts;
  private inFlight?: AbortController;

  constructor(
    readonly config: HealthConfig,
    private readonly logger: Logger,
    private readonly context: ProbeContext,
    private readonly answered: (runId: number, result: ProbeResult) => void,
    private readonly failed: (error: unknown) => void,
  ) {
    this.verdicts = new HealthVerdicts(config);
  }

  /** A new run: the start period begins again (`kept`: a reload's run took over a serving one: the verdict stays). */
  reset(now: number, kept = false): void {
    this.pause();
    if (kept) this.verdicts.handOver(now);
    else this.verdicts.reset(now);
  }

  nextIntervalMs(now: number): number {
    return this.verdicts.nextIntervalMs(now);
  }

  /** Where the checks stand: `starting` until the first pass of this run. */
  get state(): HealthState {
    return this.verdicts.state;
  }

  /** Runs every probe once, off the loop (none while a round is in flight). */
  start(runId: number): void {
    if (this.inFlight) return;
    const abort = new AbortController();
    this.inFlight = abort;
    probeAll(this.config, this.context, abort.signal).then((result) => {
      if (this.inFlight === abort) this.inFlight = undefined;
      if (!abort.signal.aborted) this.answered(runId, result);
    }, this.failed);
  }

  /** Stopping or restarting: the round in flight is given up (its command's group killed). */
  pause(): void {
    this.inFlight?.abort();
    this.inFlight = undefined;
  }

  /** Counts a result and logs it (a change of state at the default level); returns the state it leads to. */
  judge(result: ProbeResult, now: number): HealthState {
    const before = this.verdicts.state;
    const { state, counted } = this.verdicts.judge(result, now);
    const { retries } = this.config;
    const { detail } = result;
    if (result.ok) this.logger.info('health-ok', `health check passed (${detail})`, { detail });
    else {
      const count = counted ? `${this.verdicts.failures} of ${retries}` : 'in the start period, not counted';
      // The first failure after a pass makes it not ready: a change of state.
      const failing = state === 'failing' && before === 'healthy';
      const message = `health check failed (${count}): ${detail}${failing ? '; not ready until a check passes' : ''}`;
      this.logger.log(failing ? 'notice' : 'info', 'health-failed', message, {
        detail,
        failures: this.verdicts.failures,
      });
    }
    if (state === 'healthy' && before !== 'healthy')
      this.logger.notice('healthy', `command is healthy (${detail})`, { detail });
    if (state === 'unhealthy') {
      this.logger.warn(
        'unhealthy',
        `command is unhealthy: ${retries} health check(s) failed in a row, the last: ${detail}`,
        {
          failures: this.verdicts.failures,
          error: detail,
        },
      );
    }
    return state;
  }
}
