import { describe, expect, it } from 'vitest';
import { initialState, step, type Input, type State } from '../../../../src/engine/machine/step.js';
import { readiness } from '../../../../src/engine/machine/runs/readiness.js';
import type { ProcessInfo } from '../../../../src/platform/index.js';
import {
  exited,
  facts,
  feed,
  group,
  kinds,
  logged,
  lookAt,
  looked,
  reload,
  reloading,
  retiring,
  said,
  sent,
  stopSignal,
  timer,
  timers,
} from '../../../helpers/reload.js';

// Reloads (--reload-signal) in the pure step: two runs at once, each with its own ledger and timers. One row per
// input during a reload: either run crashing, stop signals one, two and three, another reload signal, a health
// verdict, the next run's ready timeout, the old run exiting first, the old run's kill timeout.

describe('a reload: the next run beside the serving one', () => {
  it('the reload signal starts run 2 beside run 1, with its own ready timeout (30 s unset); run 1 still answers /readyz', () => {
    const { state, effects } = reloading();
    expect(effects).toContainEqual({ kind: 'spawn-next', run: 2 });
    expect(effects).toContainEqual({ kind: 'set-timer', name: 'next-ready-timeout', ms: 30_000 });
    expect(logged(effects)).toEqual([
      'notice SIGHUP received: reloading: run 2 starts beside run 1, retired once run 2 says it is ready (ready timeout 30.00s)',
    ]);
    expect(state.phase === 'running' && state.run.id).toBe(1);
    expect(state.tally.beside).toMatchObject({ role: 'next', run: { id: 2, app: 'waiting' } });
    expect(readiness(state, undefined)).toEqual({ ready: true });
    // --ready-timeout applies to the next run.
    expect(reloading({ readyTimeout: 5000 }).effects).toContainEqual({
      kind: 'set-timer',
      name: 'next-ready-timeout',
      ms: 5000,
    });
  });

  it('run 2 says ready: it is the current run (health kept), run 1 is retired with SIGTERM and its own kill timeout', () => {
    const { state, effects } = feed(reloading().state, [said(2)], {}, 101_500);
    expect(kinds(effects)).toEqual([
      'clear-timer',
      'clear-timer',
      'hand-over',
      'log',
      'begin-retire',
      'set-timer',
      'look',
    ]);
    expect(effects).toContainEqual({ kind: 'hand-over', from: 1, to: 2, health: 'kept' });
    expect(effects).toContainEqual({ kind: 'set-timer', name: 'retire-kill-timeout', ms: 10_000 });
    expect(logged(effects)).toEqual([
      'notice run 2 is ready (READY=1 on NOTIFY_SOCKET) 1.50s after its start: retiring run 1 with SIGTERM (kill timeout 10.00s)',
    ]);
    expect(state.phase === 'running' && state.run).toMatchObject({ id: 2, app: 'ready' });
    expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 1 }, cause: 'reloaded' });
    expect(readiness(state, 'healthy')).toEqual({ ready: true }); // 200 throughout
  });

  it('retiring: run 1’s roots get its stop signal once, on its part of each look; run 2 none; its end is counted ok', () => {
    const { state, effects } = retiring();
    const round = effects.find((effect) => effect.kind === 'stop-round');
    expect(round).toMatchObject({ run: 1, signal: 'SIGTERM', targets: [group(1)] });
    expect(round?.kind === 'stop-round' && round.snapshot.alive.map((info) => info.pid)).toEqual([500, 501]);
    // The next looks: nothing again. The delivery's report goes to run 1's own ledger.
    const moment = { tick: 600, lastPid: 601, pidMax: 32_768 };
    const later = feed(state, [
      { kind: 'round-sent', run: 1, groups: [{ pgid: 500, moment }] },
      looked([1, 2], undefined, [1]),
      looked([1, 2], undefined, [1]),
    ]);
    expect(sent(later.effects)).toEqual([]);
    expect(later.state.tally.beside).toMatchObject({ ledger: { sent: [{ pgid: 500, moment }] } });
    // Its command exits, its part of the look is empty: one summary, `ok`, its timer cleared; gsup's status untouched.
    const end = feed(later.state, [exited(1, 0), looked([2])]);
    expect(end.effects).toContainEqual({
      kind: 'end-retire',
      run: 1,
      exit: { code: 0, signal: null },
      cause: 'reloaded',
    });
    expect(timers(end.effects)).toContain('clear-timer retire-kill-timeout');
    expect(end.state.tally.beside).toBeUndefined();
    expect(end.state.tally.reloads).toMatchObject({ ok: 1, failed: 0, killed: 0, runs: 1 });
    expect(end.state.phase).toBe('running');
  });

  it('a stopped process of run 1 (SIGSTOP, a debugger) gets SIGCONT after its SIGTERM, once; run 2’s none', () => {
    const stopped = (info: ProcessInfo): ProcessInfo => ({ ...info, state: 'T' });
    const look = lookAt(1, 2);
    const alive = look.alive.map((info) => (info.pid === 501 || info.pid === 601 ? stopped(info) : info));
    const input: Input = {
      ...looked([1, 2], undefined, [1]),
      snapshot: { ...look, alive, members: alive },
    };
    const { state, effects } = feed(reloading().state, [said(2), input, input]);
    const rounds = effects.filter((effect) => effect.kind === 'stop-round');
    expect(rounds.flatMap((round) => (round.kind === 'stop-round' ? round.cont.map((info) => info.pid) : []))).toEqual([
      501,
    ]);
    expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 1 } });
  });

  it('run 1’s kill timeout: SIGKILL to its command group, then its part of each look until none is left; counted killed', () => {
    const killing = feed(retiring().state, [timer('retire-kill-timeout')]);
    expect(killing.effects).toContainEqual({ kind: 'kill-command-group', run: 1 });
    expect(logged(killing.effects)).toEqual(["warn run 1's kill timeout (10.00s) expired: sending SIGKILL"]);
    const round = feed(killing.state, [looked([1, 2])]);
    const kill = round.effects.find((effect) => effect.kind === 'kill-round');
    expect(kill?.kind === 'kill-round' && [kill.run, kill.snapshot.alive.map((info) => info.pid)]).toEqual([
      1,
      [500, 501],
    ]);
    const end = feed(round.state, [looked([2]), { ...exited(1), exit: { code: null, signal: 'SIGKILL' } }]);
    expect(end.state.tally.reloads).toMatchObject({ ok: 0, killed: 1 });
  });

  it('run 2 crashes before it is ready: the reload failed, run 1 keeps serving, what run 2 left is stopped alone', () => {
    const { state, effects } = feed(reloading().state, [exited(2, 3)]);
    expect(logged(effects)).toEqual([
      'warn run 2 exited (code 3) before it was ready: the reload failed, run 1 keeps serving',
    ]);
    expect(state.phase === 'running' && state.run.id).toBe(1);
    expect(state.tally.reloads.failed).toBe(1);
    expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 2 }, cause: 'failed' });
    expect(kinds(effects)).not.toContain('hand-over');
    expect(readiness(state, undefined)).toEqual({ ready: true });
    // Its leftover (an app that outlived it) gets SIGTERM; run 1 nothing.
    const left: Input = { ...looked([1], undefined, [2]), snapshot: { ...lookAt(1, 2) } };
    const round = feed(state, [left]);
    expect(sent(round.effects)).toEqual(['SIGTERM 600', 'SIGTERM 601']);
  });

  it('run 2 cannot be started (its command gone in the new release): the reload failed, nothing to stop', () => {
    const notFound = { ...exited(2), exit: { code: null, signal: null, errorCode: 'ENOENT' } };
    const { state, effects } = feed(reloading().state, [notFound]);
    expect(logged(effects)).toEqual([
      'warn run 2 could not be started (ENOENT): the reload failed, run 1 keeps serving',
    ]);
    expect(effects).toContainEqual({ kind: 'end-retire', run: 2, exit: notFound.exit, cause: 'failed' });
    expect(kinds(effects)).not.toContain('begin-retire');
    expect(state.tally.beside).toBeUndefined();
    expect(state.tally.reloads.failed).toBe(1);
    // The next reload signal is taken at once.
    expect(feed(state, [reload]).effects).toContainEqual({ kind: 'spawn-next', run: 3 });
  });

  it('run 2 never says ready: at its ready timeout it is stopped with SIGTERM, run 1 untouched; counted failed once', () => {
    const { state, effects } = feed(reloading().state, [timer('next-ready-timeout'), looked([1, 2], undefined, [2])]);
    expect(logged(effects)).toEqual([
      'warn run 2 did not say it was ready within 30.00s: the reload failed, run 1 keeps serving; run 2 is stopped with SIGTERM',
    ]);
    expect(sent(effects)).toEqual(['SIGTERM 600', 'SIGTERM 601']);
    const end = feed(state, [exited(2, 143), looked([1])]);
    expect(end.effects).toContainEqual(expect.objectContaining({ kind: 'end-retire', run: 2, cause: 'failed' }));
    expect(end.state.tally.reloads).toMatchObject({ ok: 0, failed: 1, killed: 0 });
    // Its word now is heard from no one.
    expect(step(end.state, said(2), facts()).effects).toEqual([]);
  });

  it('run 1 exits first: run 2 is the current run (503 starting until ready), a restart without back-off', () => {
    const { state, effects } = feed(reloading().state, [exited(1, 1)], {}, 104_000);
    expect(logged(effects)).toEqual(['notice run 1 exited (code 1) before run 2 was ready: run 2 is the current run']);
    expect(effects).toContainEqual({ kind: 'hand-over', from: 1, to: 2, health: 'anew' });
    // What is left of its ready timeout goes on as the current run's.
    expect(effects).toContainEqual({ kind: 'set-timer', name: 'ready-timeout', ms: 26_000 });
    expect(state.phase === 'running' && state.run.id).toBe(2);
    expect(readiness(state, undefined)).toEqual({ ready: false, reason: 'starting' });
    expect(state.tally.runs - 1 - state.tally.reloads.runs).toBe(1); // gsup_restarts_total
    expect(kinds(effects)).not.toContain('spawn');
    // What run 1 left is retired; its end counts no reload.
    const end = feed(state, [looked([2])]);
    expect(end.effects).toContainEqual(expect.objectContaining({ kind: 'end-retire', run: 1, cause: 'exited' }));
    expect(end.state.tally.reloads).toMatchObject({ ok: 0, failed: 0, killed: 0 });
    expect(readiness(feed(end.state, [said(2)]).state, undefined)).toEqual({ ready: true });
  });

  it('a health verdict names either run while both live: it counts for neither (no stop, no probe scheduled)', () => {
    for (const { state } of [reloading(), retiring()])
      for (const run of [1, 2]) {
        const next = step(state, { kind: 'health', run, unhealthy: true }, facts({ probes: true }));
        expect(next.state).toBe(state);
        expect(next.effects).toEqual([]);
      }
  });
});

describe('stop signals during a reload', () => {
  it('before run 2 is ready (run 1 not signalled): one stop of the whole tree, each root once; run 1’s status is gsup’s', () => {
    const { state, effects } = feed(reloading().state, [stopSignal, looked([1, 2], [1, 2])]);
    expect(timers(effects)).toContain('clear-timer next-ready-timeout');
    expect(logged(effects)).toContain('notice the reload is cut short: run 2 is stopped with the rest of the tree');
    expect(sent(effects)).toEqual(['SIGTERM 500', 'SIGTERM 501', 'SIGTERM 600', 'SIGTERM 601']);
    // Run 2 is kept beside until it is gone (no rounds of its own, no summary, no count).
    expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 2 }, cause: 'cut' });
    expect(timers(effects)).not.toContain('set-timer retire-kill-timeout');
    // Run 2's exit is none of gsup's; run 1's is.
    const end = feed(state, [exited(2, 9), looked([1], [1]), exited(1, 0), looked([])]);
    expect(sent(end.effects)).toEqual([]);
    expect(end.effects).toContainEqual(expect.objectContaining({ kind: 'end-retire', run: 2, cause: 'cut' }));
    expect(end.state.tally.reloads).toMatchObject({ ok: 0, failed: 0, killed: 0 });
    expect(end.state.phase === 'ending' && end.state.exit).toEqual({ code: 0, signal: null });
  });

  it('while run 1 retires: the first goes to run 2 alone, the second to both, the third SIGKILLs both trees', () => {
    const first = feed(retiring().state, [stopSignal, looked([1, 2], [1, 2])]);
    expect(sent(first.effects)).toEqual(['SIGTERM 600', 'SIGTERM 601']); // run 1 already has it
    const second = feed(first.state, [{ ...stopSignal, signal: 'SIGINT' }, looked([1, 2], [1, 2])]);
    expect(sent(second.effects)).toEqual(['SIGINT 500', 'SIGINT 501', 'SIGINT 600', 'SIGINT 601']);
    const third = feed(second.state, [stopSignal, looked([1, 2])]);
    expect(third.state.phase).toBe('killing');
    expect(third.effects).toContainEqual({ kind: 'kill-command-group', run: 2 });
    const kill = third.effects.find((effect) => effect.kind === 'kill-round');
    expect(kill?.kind === 'kill-round' && kill.snapshot.alive.length).toBe(4); // both trees
    // Run 1, killed by the stop: counted as such when its part is gone.
    const end = feed(third.state, [exited(1), looked([2])]);
    expect(end.state.tally.reloads).toMatchObject({ killed: 1 });
  });

  it('exactly once per run, over many looks: run 1’s roots get SIGTERM once from its retiring, run 2’s once from the stop', () => {
    const { state, effects } = retiring();
    const after = feed(state, [
      looked([1, 2], undefined, [1]),
      stopSignal,
      looked([1, 2], [1, 2]),
      looked([1, 2], [1, 2]),
      exited(2),
      looked([1], [1]),
    ]);
    const all = sent([...effects, ...after.effects]);
    for (const pid of [500, 501, 600, 601]) expect(all.filter((line) => line === `SIGTERM ${pid}`)).toHaveLength(1);
  });
});

describe('another reload signal, and where a reload signal is dropped', () => {
  it('during a reload it is taken when the reload ends (signals meanwhile are one)', () => {
    const { state, effects } = feed(reloading().state, [reload, reload]);
    expect(logged(effects)).toEqual([
      'notice SIGHUP received during a reload: taken when it ends',
      'notice SIGHUP received during a reload: taken when it ends',
    ]);
    expect(kinds(effects)).not.toContain('spawn-next');
    const ready = feed(state, [said(2), looked([1, 2], undefined, [1])]);
    expect(kinds(ready.effects)).not.toContain('spawn-next'); // run 1 is still retiring
    const end = feed(ready.state, [exited(1), looked([2])]);
    expect(end.effects).toContainEqual({ kind: 'spawn-next', run: 3 });
    expect(end.state.tally.beside).toMatchObject({ role: 'next', run: { id: 3 } });
    expect(end.state.tally.reloads.pending).toBeUndefined();
  });

  it('during a restart’s back-off: the next run starts now; during a stop, or before the first spawn: dropped, one line', () => {
    const always = { restart: 'always' as const };
    const restarting = feed(
      initialState(),
      [{ kind: 'start', stopFirst: undefined }, exited(1, 1), looked([])],
      always,
    );
    expect(restarting.state.phase).toBe('restarting');
    const now = feed(restarting.state, [reload], always);
    expect(now.effects).toContainEqual({ kind: 'set-timer', name: 'restart-delay', ms: 0 });
    expect(logged(now.effects)).toEqual([
      "notice SIGHUP received: the restart's back-off cut short, the next run starts now",
    ]);
    // The command has just exited (its leftovers not looked at yet): the restart that follows takes it.
    const justExited = feed(initialState(), [{ kind: 'start', stopFirst: undefined }, exited(1, 1), reload], always);
    expect(logged(justExited.effects).filter((line) => line.includes('SIGHUP'))).toEqual([]);
    const taken = feed(justExited.state, [looked([])], always);
    expect(taken.state.phase).toBe('restarting');
    expect(taken.effects).toContainEqual({ kind: 'set-timer', name: 'restart-delay', ms: 0 });
    const stopping = feed(reloading().state, [stopSignal, reload]);
    expect(logged(stopping.effects)).toContain('notice SIGHUP received: dropped (a stop is under way)');
    expect(stopping.state.tally.reloads.pending).toBeUndefined();
    const early = step(initialState(), reload, facts());
    expect(logged(early.effects)).toEqual(['notice SIGHUP received: dropped (the command has not started yet)']);
    expect(early.state.phase).toBe('starting');
    expect(kinds(early.effects)).toEqual(['log']);
  });

  it('a reload signal that waited for a reload is dropped when a stop comes first', () => {
    const { state } = feed(retiring().state, [reload]);
    const stopped = feed(state, [stopSignal, exited(1), looked([2], [2])]);
    expect(logged(stopped.effects)).toContain('notice SIGHUP received: dropped (a stop is under way)');
    expect(kinds(stopped.effects)).not.toContain('spawn-next');
  });
});

describe('either run crashing while the old one retires', () => {
  it('run 2 (current) crashes: its exit is decided as ever; run 1 goes on retiring on its own timer', () => {
    const { state, effects } = feed(retiring().state, [exited(2, 1)], { restart: 'always' });
    expect(state.phase).toBe('exited');
    expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 1 } });
    expect(timers(effects)).not.toContain('clear-timer retire-kill-timeout');
    // What is left (run 1's part) is stopped before the restart: not sent SIGTERM again.
    const stop = feed(state, [looked([1], undefined, undefined), looked([1], [1])], { restart: 'always' });
    expect(sent(stop.effects)).toEqual([]);
  });

  it('run 1 (retiring) crashes: its status is its own (logged, never gsup’s), counted ok when its tree is gone', () => {
    const { state } = feed(retiring().state, [{ ...exited(1), exit: { code: null, signal: 'SIGSEGV' } }, looked([2])]);
    expect(state.tally.reloads.ok).toBe(1);
    expect(state.phase === 'running' && state.run.id).toBe(2);
  });
});

describe('a retiring run that gsup’s own end ends (issue 35)', () => {
  it('SIGKILLed at its kill timeout, its exit not reported when gsup ends: said and counted killed before the end', () => {
    // Run 2 crashes while run 1 retires (restart never): the stop of the whole tree ends with the tree, run 1's
    // command not reported yet; the last sweep ends gsup.
    const inputs: Input[] = [timer('retire-kill-timeout'), exited(2, 1), looked([1]), looked([])];
    const stopped = feed(retiring().state, inputs);
    expect(stopped.state.tally.beside).toMatchObject({ role: 'retiring', gone: true, exit: undefined });
    const { state, effects } = feed(stopped.state, [{ kind: 'swept', notYet: 0 }]);
    expect(state.phase).toBe('done');
    const retired = effects.findIndex((effect) => effect.kind === 'end-retire');
    expect(effects[retired]).toEqual({ kind: 'end-retire', run: 1, exit: undefined, cause: 'reloaded' });
    expect(retired).toBeLessThan(effects.findIndex((effect) => effect.kind === 'end'));
    expect(state.tally.reloads).toMatchObject({ ok: 0, killed: 1 });
    expect(state.tally.beside).toBeUndefined();
  });
});

describe('every input during a reload', () => {
  const moment = { tick: 700, lastPid: 700, pidMax: 32_768 };
  const inputs: Input[] = [
    stopSignal,
    { ...stopSignal, signal: 'SIGKILL' },
    ...[1, 2, 3].map((run) => exited(run, 1)),
    { kind: 'reaped', exits: [{ code: 4, signal: null }] },
    { kind: 'child-gone', treeGone: false },
    { kind: 'child-gone', treeGone: true },
    looked([1, 2], [1, 2], [1]),
    looked([1], [1], [1]),
    looked([2], [2], [2]),
    looked([]),
    { kind: 'round-sent', run: 1, groups: [{ pgid: 500, moment }] },
    { kind: 'round-sent', run: 2, groups: [{ pgid: 600, moment }] },
    { kind: 'round-sent', groups: [{ pgid: 600, moment }] },
    ...(
      [
        'stop-delay',
        'kill-timeout',
        'restart-delay',
        'check',
        'finish',
        'health',
        'ready-timeout',
        'next-ready-timeout',
        'retire-kill-timeout',
      ] as const
    ).map((name): Input => ({ kind: 'timer', name })),
    ...[1, 2].flatMap((run): Input[] => [
      { kind: 'health', run, unhealthy: true },
      said(run),
      { kind: 'app-said', run, word: 'stopping', via: 'STOPPING=1 on NOTIFY_SOCKET' },
      { kind: 'socket-taken', run, name: 'web', pid: run * 100 + 401, seen: 'word' },
    ]),
    reload,
    { kind: 'fault', message: 'boom' },
  ];
  const states: Array<[string, State]> = [
    ['run 2 starting beside run 1', reloading().state],
    ['run 1 retiring', retiring().state],
    ['run 1 retiring, a stop of both', feed(retiring().state, [stopSignal]).state],
    ['run 2 failed, retiring', feed(reloading().state, [timer('next-ready-timeout')]).state],
    ['run 1 exited first, its leftovers retiring', feed(reloading().state, [exited(1, 1)]).state],
    ['run 2 cut short by a stop', feed(reloading().state, [stopSignal]).state],
  ];
  for (const [name, state] of states)
    it.each(inputs.map((input) => [`${input.kind} ${JSON.stringify(input).slice(0, 70)}`, input] as const))(
      `${name} + %s`,
      (_, input) => {
        const before = JSON.stringify(state, (_key, value) => (value instanceof Set ? [...value] : value));
        const { state: next, effects } = step(state, input, facts({ listen: { names: ['web'], preload: true } }));
        expect(JSON.stringify(state, (_key, value) => (value instanceof Set ? [...value] : value))).toBe(before);
        // A next run lives only beside a running one; a run is never retired twice at once.
        if (next.tally.beside?.role === 'next') expect(next.phase).toBe('running');
        expect(kinds(effects).filter((kind) => kind === 'begin-retire').length).toBeLessThanOrEqual(1);
        // The stop's rounds never signal the retiring run's roots again (they are in its ledger).
        const retired = state.tally.beside?.role === 'retiring' ? state.tally.beside : undefined;
        if (retired && next.phase === 'stopping' && 'stop' in state === false)
          for (const key of retired.ledger.reached) expect(next.stop.ledger.reached.has(key)).toBe(true);
        expect(kinds(effects).filter((kind) => kind === 'end')).toHaveLength(next.phase === 'done' ? 1 : 0);
      },
    );
});
