import { describe, expect, it } from 'vitest';
import {
  initialState,
  step,
  type Effect,
  type Input,
  type MachineConfig,
  type State,
} from '../../../../src/engine/machine/step.js';
import { besideEnds } from '../../../../src/engine/machine/queries.js';
import { retireRoundSignal } from '../../../../src/engine/machine/runs/retire.js';
import { factsWith } from '../../../helpers/machine.js';
import { group, kinds, logged, lookAt, looked, reload, sent, stopSignal, timers } from '../../../helpers/reload.js';

// The drain in the pure step (--listen with the preload): a reload's old run is told `drain`, one word per process
// that took a held socket; its stop signal goes once every such process holds no connection, or at the drain limit;
// the final stop's delay tells the current run `closing`.

const facts = factsWith({ listen: { names: ['web'], preload: true } });

function feed(state: State, inputs: Input[], overrides: Partial<MachineConfig> = {}, now = 100_000) {
  const effects: Effect[] = [];
  for (const input of inputs) {
    const next = step(state, input, facts(overrides, now));
    effects.push(...next.effects);
    state = next.state;
  }
  return { state, effects };
}

const took = (run: number, pid: number): Input => ({ kind: 'socket-taken', run, name: 'web', pid, seen: 'word' });
const conns = (run: number, pid: number, count: number): Input => ({ kind: 'conns', run, pid, count });
const drainLimit: Input = { kind: 'timer', name: 'drain-limit' };
const tells = (effects: Effect[]) =>
  effects.flatMap((effect) => (effect.kind === 'tell' ? [`${effect.run} ${effect.word}`] : []));

/** Run 1 serving (its processes `pids` took the held socket by their word), run 2 ready: run 1 drains. */
function draining(pids = [501], overrides: Partial<MachineConfig> = {}) {
  const started = feed(
    initialState(),
    [{ kind: 'start', stopFirst: undefined }, ...pids.map((pid) => took(1, pid))],
    overrides,
  );
  return feed(started.state, [reload, took(2, 601)], overrides, 101_000);
}

describe('a reload drains the old run before its stop signal', () => {
  it('run 2 ready: run 1 is told to drain, with its drain limit; no stop signal, no kill timeout yet', () => {
    const { state, effects } = draining();
    expect(tells(effects)).toEqual(['1 drain']);
    expect(timers(effects)).toContain('set-timer drain-limit');
    expect(effects).toContainEqual({ kind: 'set-timer', name: 'drain-limit', ms: 6000 });
    expect(timers(effects)).not.toContain('set-timer retire-kill-timeout');
    expect(logged(effects)).toContainEqual(
      expect.stringMatching(
        /^notice run 2 is ready .*: draining run 1 \(drain limit 6\.00s\), then SIGTERM \(kill timeout/,
      ),
    );
    expect(state.tally.beside).toMatchObject({ role: 'retiring', run: { id: 1 }, draining: true });
    expect(besideEnds(state)).toBe('drain-limit');
    expect(retireRoundSignal(state)).toBeUndefined();
    // A look while it drains sends nothing.
    expect(sent(feed(state, [looked([1, 2], undefined, [1])]).effects)).toEqual([]);
  });

  it('its connections said as they go: the stop signal once none is left (and a look), then its kill timeout', () => {
    const { state } = draining();
    const open = feed(state, [conns(1, 501, 3), conns(1, 501, 1)], {}, 101_100);
    expect(kinds(open.effects)).not.toContain('look');
    expect(logged(open.effects)).toEqual([
      'info run 1 drains: 3 connection(s) open (1 process(es) hold some)', // its first word at -v, the rest at -vv
      'debug run 1 drains: 1 connection(s) open (1 process(es) hold some)',
    ]);
    const done = feed(open.state, [conns(1, 501, 0)], {}, 101_250);
    expect(logged(done.effects)).toEqual(['info run 1 drained after 250ms: no connection left, SIGTERM now']);
    expect(timers(done.effects)).toEqual(['clear-timer drain-limit', 'set-timer retire-kill-timeout']);
    expect(kinds(done.effects)).toContain('look');
    expect(besideEnds(done.state)).toBe('retire-kill-timeout');
    const round = feed(done.state, [looked([1, 2], undefined, [1])]);
    expect(round.effects.find((effect) => effect.kind === 'stop-round')).toMatchObject({ targets: [group(1)] });
    // A late word changes nothing: the drain is over.
    expect(feed(round.state, [conns(1, 501, 0), drainLimit]).effects.filter((e) => e.kind !== 'log')).toEqual([]);
  });

  it('the drain limit: the stop signal goes whatever is still open (a long connection), said at -v', () => {
    const { state } = draining();
    const limit = feed(state, [conns(1, 501, 1), drainLimit], {}, 107_000);
    expect(logged(limit.effects)).toContainEqual(
      'info run 1 at the drain limit (6.00s): 1 connection(s) still open; SIGTERM now',
    );
    expect(timers(limit.effects)).toContain('set-timer retire-kill-timeout');
    expect((limit.state.tally.beside as { draining?: boolean }).draining).toBe(false);
    // What its processes say after the limit is no drain any more (it was said as `run 1 drains: …`).
    const later = feed(limit.state, [conns(1, 501, 2)], {}, 107_100);
    expect(logged(later.effects).filter((line) => line.includes('drains'))).toEqual([]);
  });

  it('two processes took the socket: one word each, the second once the first answered; drained when both hold none', () => {
    const { state, effects } = draining([501, 502]);
    expect(tells(effects)).toEqual(['1 drain']);
    const first = feed(state, [conns(1, 501, 0)]);
    expect(tells(first.effects)).toEqual(['1 drain']); // the next process's
    expect(timers(first.effects)).not.toContain('set-timer retire-kill-timeout');
    const again = feed(first.state, [conns(1, 501, 0)]);
    expect(tells(again.effects)).toEqual([]); // one word per process
    const both = feed(again.state, [conns(1, 502, 0)]);
    expect(timers(both.effects)).toContain('set-timer retire-kill-timeout');
  });

  it('a process gone (a look without it, or the report channel ended) holds no connection', () => {
    const { state } = draining([501]);
    const gone = feed(state, [
      conns(1, 501, 2),
      { kind: 'looked', snapshot: lookAt(2), commandPgid: 600, route: undefined },
    ]);
    expect(timers(gone.effects)).toContain('set-timer retire-kill-timeout');
    const closed = feed(state, [{ kind: 'report-closed', run: 1 }]);
    expect(timers(closed.effects)).toContain('set-timer retire-kill-timeout');
  });

  it('without the preload (--no-listen-preload), or a run seen only by the kernel: the stop signal at once, as before', () => {
    const plain = draining([501], { listen: { names: ['web'], preload: false } });
    expect(tells(plain.effects)).toEqual([]);
    expect(timers(plain.effects)).toContain('set-timer retire-kill-timeout');
    const started = feed(initialState(), [
      { kind: 'start', stopFirst: undefined },
      { kind: 'socket-taken', run: 1, name: 'web', pid: 501, seen: 'kernel' },
    ]);
    const kernel = feed(started.state, [reload, took(2, 601)]);
    expect(tells(kernel.effects)).toEqual([]);
    expect(timers(kernel.effects)).toContain('set-timer retire-kill-timeout');
  });

  it('a stop of the whole tree while run 1 drains: the drain ends, the stop reaches both runs once each', () => {
    const { state } = draining();
    const stop = feed(state, [stopSignal, looked([1, 2], [1, 2])]);
    expect(timers(stop.effects)).toContain('clear-timer drain-limit');
    expect(sent(stop.effects).sort()).toEqual(['SIGTERM 500', 'SIGTERM 501', 'SIGTERM 600', 'SIGTERM 601']);
  });
});

describe('the final stop: its delay tells the run to answer with Connection: close', () => {
  it('--stop-delay: `closing` to the current run, then the stop signal after the delay', () => {
    const started = feed(initialState(), [{ kind: 'start', stopFirst: undefined }, took(1, 501)], { stopDelay: 1000 });
    const stop = feed(started.state, [stopSignal], { stopDelay: 1000 });
    expect(tells(stop.effects)).toEqual(['1 closing']);
    expect(timers(stop.effects)).toContain('set-timer stop-delay');
    // Without a delay, nothing to tell.
    expect(tells(feed(started.state, [stopSignal]).effects)).toEqual([]);
  });
});
