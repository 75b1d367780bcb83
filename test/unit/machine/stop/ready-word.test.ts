import { describe, expect, it } from 'vitest';
import { initialState, step, type Effect, type Input } from '../../../../src/engine/machine/step.js';
import type { MachineConfig } from '../../../../src/engine/machine/step.js';
import type { State } from '../../../../src/engine/machine/step.js';
import { readiness } from '../../../../src/engine/machine/runs/readiness.js';
import { factsWith } from '../../../helpers/machine.js';

// --wait-ready in the pure step: the app's word is an input, its state the run's; readiness reads it.

const facts = factsWith({ waitReady: true, readyTimeout: 5000 });
const logged = (effects: Effect[]) =>
  effects.flatMap((effect) => (effect.kind === 'log' ? [`${effect.level} ${effect.message}`] : []));
const via = 'READY=1 on NOTIFY_SOCKET';
const said = (word: 'ready' | 'stopping', run = 1): Input => ({ kind: 'app-said', run, word, via });
/** Run 1's command exited 0 (of the SIGTERM gsup sent), leaving nothing. */
const exited0: Input = {
  kind: 'command-exit',
  run: 1,
  exit: { code: 0, signal: null },
  sent: new Set(['SIGTERM']),
  treeGone: true,
  mayHaveDaemon: false,
  wrapper: false,
};

/** A run started at 100 s (with these settings), as the step leaves it. */
function started(overrides: Partial<MachineConfig> = {}): { state: State; effects: Effect[] } {
  return step(initialState(), { kind: 'start', stopFirst: undefined }, facts(overrides));
}

describe('--wait-ready: the app says when it is ready', () => {
  it('a run starts waiting (503 starting), a timer set; the word makes it ready, said with how long it took', () => {
    const { state, effects } = started();
    expect(effects).toContainEqual({ kind: 'set-timer', name: 'ready-timeout', ms: 5000 });
    expect(readiness(state, undefined)).toEqual({ ready: false, reason: 'starting' });
    const ready = step(state, said('ready'), facts({}, 101_250));
    expect(readiness(ready.state, undefined)).toEqual({ ready: true });
    expect(ready.effects).toContainEqual({ kind: 'clear-timer', name: 'ready-timeout' });
    const line = 'info the app said it is ready (READY=1 on NOTIFY_SOCKET) 1.25s after its start';
    expect(logged(ready.effects)).toEqual([line]);
    // Said again: nothing more.
    expect(step(ready.state, said('ready'), facts()).effects).toEqual([]);
  });

  it('without --wait-ready a run is ready at once, and no timer is set', () => {
    const { state, effects } = started({ waitReady: false, readyTimeout: undefined });
    expect(readiness(state, undefined)).toEqual({ ready: true });
    expect(effects.some((effect) => effect.kind === 'set-timer' && effect.name === 'ready-timeout')).toBe(false);
  });

  it('with health checks as well, both must hold', () => {
    const { state } = started();
    expect(readiness(state, 'healthy')).toEqual({ ready: false, reason: 'starting' }); // checks passed, no word yet
    const ready = step(state, said('ready'), facts()).state;
    expect(readiness(ready, 'starting')).toEqual({ ready: false, reason: 'starting' }); // the word, no check passed yet
    expect(readiness(ready, 'healthy')).toEqual({ ready: true });
  });

  it('a word of an older run, or during a stop, changes nothing', () => {
    const { state } = started();
    expect(step(state, said('ready', 0), facts()).state).toBe(state);
    const stopping = step(state, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' }, facts()).state;
    expect(step(stopping, said('ready'), facts()).state).toBe(stopping);
  });

  it('STOPPING=1: not ready (stopping), and a late READY=1 does not undo it', () => {
    const ready = step(started().state, said('ready'), facts()).state;
    const stopping = step(ready, said('stopping'), facts());
    expect(readiness(stopping.state, undefined)).toEqual({ ready: false, reason: 'stopping' });
    expect(logged(stopping.effects)).toEqual([`info the app said it is stopping (${via}): not ready`]);
    const late = step(stopping.state, said('ready'), facts()).state;
    expect(readiness(late, undefined)).toEqual({ ready: false, reason: 'stopping' });
  });

  it('no word by the ready timeout: a failed start, stopped as failed health checks are, never exit 0', () => {
    const { state } = started();
    const timedOut = step(state, { kind: 'timer', name: 'ready-timeout' }, facts({}, 105_000));
    expect(timedOut.state.phase).toBe('stopping');
    expect(timedOut.effects.map((effect) => effect.kind)).toContain('begin-stop');
    expect(logged(timedOut.effects)).toEqual([
      'warn the app did not say it was ready within 5.00s (--ready-timeout): a failed start',
      'notice not ready: stopping the tree with SIGTERM (kill timeout 10.00s)',
    ]);
    expect(readiness(timedOut.state, undefined)).toEqual({ ready: false, reason: 'unhealthy' });
    // The app exits 0 on SIGTERM: gsup still exits 1.
    let after = step(timedOut.state, exited0, facts()).state;
    after = step(after, { kind: 'swept', notYet: 0 }, facts()).state;
    expect(after.phase === 'done' && after.exitCode).toBe(1);
  });

  it('under --restart on-failure the failed start restarts, counted as a failure', () => {
    const onFailure = { restart: 'on-failure' } as const;
    const { state } = started(onFailure);
    const timedOut = step(state, { kind: 'timer', name: 'ready-timeout' }, facts(onFailure, 105_000)).state;
    expect(readiness(timedOut, undefined)).toEqual({ ready: false, reason: 'restarting' });
    const restarting = step(timedOut, exited0, facts(onFailure, 105_100));
    expect(restarting.state.phase).toBe('restarting');
    const line = 'notice command did not say it was ready in time (restart 1 of 10): restarting in 1.00s';
    expect(logged(restarting.effects)).toContain(line);
    const next = step(restarting.state, { kind: 'timer', name: 'restart-delay' }, facts(onFailure, 106_100));
    expect(next.state.phase === 'running' && next.state.run).toMatchObject({ id: 2, app: 'waiting' });
    expect(next.effects).toContainEqual({ kind: 'set-timer', name: 'ready-timeout', ms: 5000 });
  });

  it('the ready timeout after the word, or in another phase, does nothing', () => {
    const ready = step(started().state, said('ready'), facts()).state;
    expect(step(ready, { kind: 'timer', name: 'ready-timeout' }, facts()).state).toBe(ready);
  });
});
