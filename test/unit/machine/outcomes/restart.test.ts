import { describe, expect, it } from 'vitest';
import {
  decideRestart,
  firstRestartState,
  type RestartMode,
  type RestartState,
} from '../../../../src/engine/machine/outcomes/restart.js';
import { initialState, type Input } from '../../../../src/engine/machine/step.js';
import type { CommandExit } from '../../../../src/engine/machine/values.js';
import { feed, logged, timer } from '../../../helpers/reload.js';

/** The pure decision, threaded through its state the way the engine's step does. */
class RestartPolicy {
  private state: RestartState = firstRestartState();
  constructor(
    readonly restart: RestartMode,
    readonly maxRestarts: number,
    readonly restartDelay: number,
  ) {}
  decide(
    exit: { code: number | null; signal: NodeJS.Signals | null; signo?: number; errorCode?: string },
    livedMs: number,
    sent: ReadonlySet<NodeJS.Signals>,
  ) {
    const { decision, state } = decideRestart(this.state, this, exit, livedMs, sent);
    this.state = state;
    return decision;
  }
}

const none = new Set<NodeJS.Signals>();
const failed = { code: 1, signal: null };

describe('RestartPolicy', () => {
  it('never restarts by default', () => {
    expect(new RestartPolicy('never', 10, 1000).decide(failed, 5, none)).toEqual({ restart: false });
  });

  it('on-failure: non-zero exits and signals gsup did not send; not exit 0, not a signal it forwarded', () => {
    const policy = () => new RestartPolicy('on-failure', 10, 1000);
    expect(policy().decide(failed, 5, none).restart).toBe(true);
    expect(policy().decide({ code: 0, signal: null }, 5, none).restart).toBe(false);
    expect(policy().decide({ code: null, signal: 'SIGKILL' }, 5, none).restart).toBe(true);
    expect(policy().decide({ code: null, signal: 'SIGHUP' }, 5, new Set(['SIGHUP'])).restart).toBe(false);
    expect(policy().decide({ code: null, signal: null, errorCode: 'ENOENT' }, 5, none).restart).toBe(false);
  });

  it('on-failure: a death of a real-time signal (no name here; gsup never sends one) is a failure, said by number', () => {
    const decision = new RestartPolicy('on-failure', 10, 1000).decide({ code: null, signal: null, signo: 36 }, 5, none);
    expect(decision).toMatchObject({ restart: true, reason: 'died of signal 36' });
  });

  it('always: exit 0 too', () => {
    expect(new RestartPolicy('always', 10, 1000).decide({ code: 0, signal: null }, 5, none)).toMatchObject({
      restart: true,
      reason: 'exited with code 0',
    });
  });

  it('doubles the delay after each quick failure, up to 30 s, and gives up after maxRestarts in a row', () => {
    const policy = new RestartPolicy('on-failure', 7, 1000);
    const delays: number[] = [];
    for (let run = 0; run < 7; run++) {
      const decision = policy.decide(failed, 100, none);
      if (!decision.restart) throw new Error('expected a restart');
      delays.push(decision.delayMs);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(policy.decide(failed, 100, none)).toEqual({
      restart: false,
      reason: 'exited with code 1; giving up after 7 restart(s) in a row',
    });
  });

  it('a run that lived 10 s or more resets the delay and the count', () => {
    const policy = new RestartPolicy('on-failure', 2, 500);
    policy.decide(failed, 100, none);
    policy.decide(failed, 100, none);
    expect(policy.decide(failed, 12_000, none)).toMatchObject({ restart: true, delayMs: 500, attempt: 0 });
    expect(policy.decide(failed, 100, none)).toMatchObject({ restart: true, delayMs: 500, attempt: 1 });
  });

  it('--max-restarts 0: a quick failure gives up at once; a run of 10 s or more is no failure in a row', () => {
    const policy = new RestartPolicy('on-failure', 0, 500);
    expect(policy.decide(failed, 3_600_000, none)).toMatchObject({ restart: true, delayMs: 500, attempt: 0 });
    const giveUp = { restart: false, reason: 'exited with code 1; giving up after 0 restart(s) in a row' };
    expect(policy.decide(failed, 100, none)).toEqual(giveUp);
    const always = new RestartPolicy('always', 0, 500);
    expect(always.decide({ code: 0, signal: null }, 12_000, none)).toMatchObject({ restart: true });
  });

  it('the first delay is capped at 30 s like the later ones, also after a stable run', () => {
    const policy = new RestartPolicy('on-failure', 5, 60_000);
    expect(policy.decide(failed, 100, none)).toMatchObject({ restart: true, delayMs: 30_000 });
    expect(policy.decide(failed, 100, none)).toMatchObject({ restart: true, delayMs: 30_000 });
    expect(policy.decide(failed, 12_000, none)).toMatchObject({ restart: true, delayMs: 30_000 });
  });
});

describe('a restart’s run that could not be started, in the step (issue 35, part 3)', () => {
  const gone = (run: number, exit: CommandExit): Input => ({
    kind: 'command-exit',
    run,
    exit,
    sent: new Set(),
    treeGone: true,
    mayHaveDaemon: false,
    wrapper: false,
  });
  const enoent: CommandExit = { code: null, signal: null, errorCode: 'ENOENT' };
  const start: Input = { kind: 'start', stopFirst: undefined };
  const config = { waitReady: false, restart: 'on-failure' as const };

  it('a failed start under the policy: counted like a crash (back-off, restart N of M), never an exit', () => {
    const { state, effects } = feed(
      initialState(),
      [start, gone(1, { code: 1, signal: null }), timer('restart-delay'), gone(2, enoent)],
      config,
    );
    expect(state.phase).toBe('restarting');
    expect(logged(effects)).toContain(
      'notice command could not be started (ENOENT) (restart 2 of 10): restarting in 2.00s',
    );
    expect(effects.filter((effect) => effect.kind === 'end')).toEqual([]);
  });

  it('given up at --max-restarts: one line, gsup ends with the start’s own status (127); the first run’s ends at once', () => {
    const inputs = [start, gone(1, { code: 1, signal: null }), timer('restart-delay'), gone(2, enoent)];
    const given = feed(initialState(), [...inputs, { kind: 'swept', notYet: 0 }], { ...config, maxRestarts: 1 });
    expect(logged(given.effects)).toContain(
      'warn run 2 could not be started (ENOENT); giving up after 1 restart(s) in a row',
    );
    expect(given.state).toMatchObject({ phase: 'done', exitCode: 127 });
    const first = feed(initialState(), [start, gone(1, enoent), { kind: 'swept', notYet: 0 }], config);
    expect(first.state).toMatchObject({ phase: 'done', exitCode: 127 });
    expect(logged(first.effects).filter((line) => line.includes('restart'))).toEqual([]);
  });
});
