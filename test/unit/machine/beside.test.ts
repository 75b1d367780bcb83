import { describe, expect, it } from 'vitest';
import { initialState, type Input } from '../../../src/engine/machine/step.js';
import { besideEnds } from '../../../src/engine/machine/queries.js';
import { readiness } from '../../../src/engine/machine/runs/readiness.js';
import { MAX_KILL_MS } from '../../../src/engine/machine/ledger/pace.js';
import { lookOf } from '../../helpers/machine.js';
import { exited, feed, kinds, logged, looked, reload, said } from '../../helpers/reload.js';
import { retiring as retiringState, timer } from '../../helpers/reload.js';

// A run beside the current one (a reload's) always has a way to its end: the machine never leaves one that no
// timer, look or exit can end (F1 of the review of issue 32: a restart while the old run retired left it beside
// for ever, every later reload signal "taken when it ends", the health checks' verdicts counting for nothing).

const always = { restart: 'always' as const, restartDelay: 1 };
const gone = (input: Extract<Input, { kind: 'command-exit' }>) => ({ ...input, treeGone: true });

/** Run 2 ready, run 1 retiring (draining: its SIGTERM sent); then run 2 crashes, leaving run 1: a stop before the restart. */
function crashWhileRetiring() {
  const { state } = feed(retiringState().state, [exited(2, 1), looked([1], undefined, [1])], always);
  expect(state.phase).toBe('stopping');
  expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 1 }, gone: false });
  return state;
}

describe('a restart while the old run retires (F1)', () => {
  it('the stop before the restart ends with no child left, before any look: run 1 is retired with it, counted ok', () => {
    // Run 1 drains and exits: its exit (gsup has no child left), then SIGCHLD (the tree gone), no look between.
    const { state, effects } = feed(crashWhileRetiring(), [gone(exited(1, 0)), { kind: 'child-gone', treeGone: true }]);
    expect(effects).toContainEqual({ kind: 'end-retire', run: 1, exit: { code: 0, signal: null }, cause: 'reloaded' });
    expect(effects).toContainEqual({ kind: 'clear-timer', name: 'retire-kill-timeout' });
    expect(state.tally.beside).toBeUndefined();
    expect(state.tally.reloads).toMatchObject({ ok: 1, killed: 0 });
    // The restart spawns run 3 with nothing beside: health verdicts count, a reload signal starts a next run at once.
    const restarted = feed(state, [timer('restart-delay'), said(3)], always);
    expect(restarted.effects).toContainEqual({ kind: 'spawn', run: 3 });
    expect(readiness(restarted.state, undefined)).toEqual({ ready: true });
    expect(feed(restarted.state, [reload], always).effects).toContainEqual({ kind: 'spawn-next', run: 4 });
  });

  it('its exit not yet reported when the tree is gone: it is gone, and its exit (libuv reports it) ends it', () => {
    const { state, effects } = feed(crashWhileRetiring(), [{ kind: 'child-gone', treeGone: true }]);
    expect(kinds(effects)).not.toContain('end-retire');
    expect(state.tally.beside).toMatchObject({ role: 'retiring', gone: true, exit: undefined });
    expect(besideEnds(state)).toBe('exit');
    // The restart spawns run 3 meanwhile; looks of a tree that tells runs apart no more change nothing.
    const later = feed(state, [timer('restart-delay'), { ...looked([3]), snapshot: lookOf([]) }], always);
    expect(later.effects).toContainEqual({ kind: 'spawn', run: 3 });
    const end = feed(later.state, [exited(1, 0)], always);
    expect(end.effects).toContainEqual({
      kind: 'end-retire',
      run: 1,
      exit: { code: 0, signal: null },
      cause: 'reloaded',
    });
    expect(end.state.tally.beside).toBeUndefined();
  });

  it('the current run exits with no child left while run 1 retires (no look): run 1 is gone with the tree', () => {
    const { state, effects } = feed(retiringState().state, [exited(1, 0), gone(exited(2, 1))], always);
    expect(effects).toContainEqual(expect.objectContaining({ kind: 'end-retire', run: 1, cause: 'reloaded' }));
    expect(state.phase).toBe('restarting');
    expect(state.tally.beside).toBeUndefined();
  });

  it('looks that tell no run apart: never past its kill timeout and what SIGKILL may take (one line says so)', () => {
    const blind: Input = { kind: 'looked', snapshot: lookOf([]), commandPgid: undefined, route: undefined };
    const { state } = feed(retiringState().state, [blind, timer('retire-kill-timeout'), blind], {}, 100_000);
    expect(state.tally.beside).toMatchObject({ role: 'retiring', killedAt: 100_000 });
    const end = feed(state, [blind], {}, 100_001 + MAX_KILL_MS);
    expect(logged(end.effects)).toEqual([
      "warn run 1's part of the tree is told apart no more: it is no longer waited for",
    ]);
    expect(end.effects).toContainEqual(expect.objectContaining({ kind: 'end-retire', run: 1 }));
    expect(end.state.tally.beside).toBeUndefined();
  });

  it('a next run cut short by a failed start’s stop (--ready-timeout, then a restart): ended with the stop', () => {
    const waiting = { ...always, readyTimeout: 5000 };
    // Run 1 has not said ready yet when the reload signal comes; its ready timeout then stops the whole tree.
    const start: Input = { kind: 'start', stopFirst: undefined };
    const cut = feed(initialState(), [start, reload, { kind: 'timer', name: 'ready-timeout' }], waiting);
    expect(cut.state.phase).toBe('stopping');
    expect(cut.state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 2 }, cause: 'cut' });
    expect(besideEnds(cut.state)).toBe('stop');
    const { state, effects } = feed(cut.state, [{ kind: 'child-gone', treeGone: true }], waiting);
    expect(state.phase).toBe('restarting');
    expect(besideEnds(state)).toBe('exit');
    expect(kinds(effects)).toContain('set-timer');
    const end = feed(state, [exited(1, 143), exited(2, 143)], waiting);
    expect(end.effects).toContainEqual(expect.objectContaining({ kind: 'end-retire', run: 2, cause: 'cut' }));
    expect(end.state.tally.beside).toBeUndefined();
  });
});
