import { describe, expect, it } from 'vitest';
import { initialState, type Effect, type Input } from '../../../../src/engine/machine/step.js';
import { besideEnds } from '../../../../src/engine/machine/queries.js';
import { exited, feed, kinds, logged, reload } from '../../../helpers/reload.js';

// What a run took of the held sockets decides (--listen, the review of issue 32): a reload's next run is ready once
// it has taken every socket the serving run took (F5); its ready timeout asks the kernel once more before the
// reload fails (F2); a run that leaves a held socket untaken is warned of ten seconds after its start (F6).

const listen = { listen: { names: ['web', 'admin'], preload: true }, waitReady: false };
const start: Input = { kind: 'start', stopFirst: undefined };
const taken = (run: number, name: string, seen: 'word' | 'kernel' = 'word'): Input => ({
  kind: 'socket-taken',
  run,
  name,
  pid: run * 100 + 401,
  seen,
});
const sampled = (run: number, why: 'next-ready' | 'untaken'): Input => ({ kind: 'takers-sampled', run, why });
const timer = (name: 'next-ready-timeout' | 'untaken'): Input => ({ kind: 'timer', name });
const samples = (effects: Effect[]) => effects.filter((effect) => effect.kind === 'sample-takers');
const warned = (effects: Effect[]) => logged(effects).filter((line) => line.startsWith('warn'));

/** Run 1 serving, having taken `took`; then the reload signal: run 2 starting beside it. */
function reloading(took: string[], now = 100_000) {
  return feed(initialState(), [start, ...took.map((name) => taken(1, name)), reload], listen, now);
}

describe('a next run is ready once it has taken every held socket the serving run took (F5)', () => {
  it('run 1 took both: run 2 taking one is not ready; taking the other it is, and run 1 is retired then', () => {
    const one = feed(reloading(['web', 'admin']).state, [taken(2, 'web')], listen);
    expect(kinds(one.effects)).not.toContain('hand-over');
    expect(one.state.tally.beside?.role).toBe('next');
    const both = feed(one.state, [taken(2, 'admin', 'kernel')], listen, 101_000);
    expect(both.effects).toContainEqual({ kind: 'hand-over', from: 1, to: 2, health: 'kept' });
    expect(logged(both.effects)).toContainEqual(
      expect.stringContaining(
        'run 2 is ready (the kernel saw it listen on every held socket run 1 took (web, admin)) 1.00s after its start',
      ),
    );
  });

  it('run 1 took one of them: run 2 is ready at that one (a socket the serving run left alone is none of the app’s)', () => {
    const { effects } = feed(reloading(['admin']).state, [taken(2, 'admin')], listen);
    expect(logged(effects)).toContainEqual(
      expect.stringContaining('run 2 is ready (its first listen on the held socket admin)'),
    );
  });

  it('what run 1 took is not known (it said nothing, the kernel showed nothing): run 2 takes every held socket', () => {
    const one = feed(reloading([]).state, [taken(2, 'admin')], listen);
    expect(kinds(one.effects)).not.toContain('hand-over');
    const both = feed(one.state, [taken(2, 'web')], listen);
    expect(logged(both.effects)).toContainEqual(
      expect.stringContaining('its first listen on every held socket gsup holds (web, admin)'),
    );
  });
});

describe('a next run’s ready timeout: the kernel asked once more, then the reload fails (F2)', () => {
  it('at its timeout the kernel is asked; what it shows then makes it ready', () => {
    const timedOut = feed(reloading(['web']).state, [timer('next-ready-timeout')], listen);
    expect(samples(timedOut.effects)).toEqual([{ kind: 'sample-takers', run: 2, why: 'next-ready' }]);
    expect(logged(timedOut.effects)).toEqual([]);
    expect(besideEnds(timedOut.state)).toBe('last-sample');
    // The timer again (a stale event) asks nothing more.
    expect(feed(timedOut.state, [timer('next-ready-timeout')], listen).effects).toEqual([]);
    const ready = feed(timedOut.state, [taken(2, 'web', 'kernel'), sampled(2, 'next-ready')], listen);
    expect(ready.effects).toContainEqual({ kind: 'hand-over', from: 1, to: 2, health: 'kept' });
    expect(kinds(ready.effects)).not.toContain('end-retire');
    expect(ready.state.tally.reloads.failed).toBe(0);
  });

  it('nothing more seen: the reload fails, naming what it did not take', () => {
    const partial = feed(reloading(['web', 'admin']).state, [taken(2, 'web'), timer('next-ready-timeout')], listen);
    const failed = feed(partial.state, [sampled(2, 'next-ready')], listen);
    expect(warned(failed.effects)).toEqual([
      'warn run 2 did not listen on the held socket(s) admin within 30.00s (it took web): the reload failed, ' +
        'run 1 keeps serving; run 2 is stopped with SIGTERM',
    ]);
    expect(failed.state.tally.reloads.failed).toBe(1);
    const none = feed(reloading(['web']).state, [timer('next-ready-timeout'), sampled(2, 'next-ready')], listen);
    expect(warned(none.effects)[0]).toMatch(/^warn run 2 did not listen on a held socket within 30.00s: /);
  });

  it('with --wait-ready the word decides: no sample, it fails at once', () => {
    const config = { ...listen, waitReady: true };
    const boot = feed(initialState(), [start, { kind: 'app-said', run: 1, word: 'ready', via: 'x' }, reload], config);
    const failed = feed(boot.state, [timer('next-ready-timeout')], config);
    expect(samples(failed.effects)).toEqual([]);
    expect(failed.state.tally.reloads.failed).toBe(1);
  });
});

describe('held sockets a run leaves untaken are warned of, ten seconds after its start (F6)', () => {
  it('each spawn sets the check; due, the kernel is asked; then one warning naming what is untaken, once', () => {
    const boot = feed(initialState(), [start], listen);
    expect(boot.effects).toContainEqual({ kind: 'set-timer', name: 'untaken', ms: 10_000 });
    const due = feed(boot.state, [timer('untaken')], listen, 110_000);
    expect(samples(due.effects)).toEqual([{ kind: 'sample-takers', run: 1, why: 'untaken' }]);
    const said = feed(due.state, [sampled(1, 'untaken')], listen, 110_050);
    expect(warned(said.effects)).toEqual([
      'warn run 1 has taken no held socket (web, admin) 10.05s after its start: connections wait in the queue ' +
        "unanswered; the app listens on another port or address (left to it), gsup's preload did not load (a " +
        "script reset NODE_OPTIONS), or the server is no Node's (a native one, Bun)",
    ]);
    // Once: not again, nor at its end.
    const later = feed(said.state, [timer('untaken'), sampled(1, 'untaken'), exited(1, 1)], listen, 120_000);
    expect(warned(later.effects)).toEqual([]);
  });

  it('some taken: the others named; what the kernel shows before the answer counts', () => {
    const started = feed(initialState(), [start, taken(1, 'web')], listen, 100_000);
    const boot = feed(started.state, [timer('untaken')], listen, 110_000);
    const partial = feed(boot.state, [sampled(1, 'untaken')], listen, 110_000);
    expect(warned(partial.effects)).toEqual([
      'warn run 1 has not taken the held socket(s) admin 10.00s after its start (it took web): connections to ' +
        'them wait in the queue unanswered; the app listens on another port or address',
    ]);
    const seen = feed(boot.state, [taken(1, 'admin', 'kernel'), sampled(1, 'untaken')], listen, 110_000);
    expect(warned(seen.effects)).toEqual([]);
    // Everything taken when it is due: the kernel is not even asked.
    const all = feed(initialState(), [start, taken(1, 'web'), taken(1, 'admin'), timer('untaken')], listen);
    expect(samples(all.effects)).toEqual([]);
  });

  it('a reload hands over to a younger run: its own check, when it is ten seconds old', () => {
    const { state } = feed(reloading(['web'], 100_000).state, [taken(2, 'web')], listen, 104_000);
    // Run 2 started at 100 000 (the reload): 6 s of its 10 are left when it becomes current at 104 000.
    const ready = feed(reloading(['web'], 100_000).state, [taken(2, 'web')], listen, 104_000);
    expect(ready.effects).toContainEqual({ kind: 'set-timer', name: 'untaken', ms: 6000 });
    const early = feed(state, [timer('untaken')], listen, 105_000);
    expect(early.effects).toEqual([{ kind: 'set-timer', name: 'untaken', ms: 5000 }]);
    expect(samples(feed(state, [timer('untaken')], listen, 110_000).effects)).toEqual([
      { kind: 'sample-takers', run: 2, why: 'untaken' },
    ]);
    // Without --listen there is nothing to check.
    expect(feed(initialState(), [start]).effects.map((effect) => effect.kind)).toEqual(['spawn']);
  });
});
