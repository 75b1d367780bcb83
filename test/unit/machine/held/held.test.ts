import { describe, expect, it } from 'vitest';
import { initialState, step, type Effect, type Input, type State } from '../../../../src/engine/machine/step.js';
import type { MachineConfig } from '../../../../src/engine/machine/step.js';
import { readiness } from '../../../../src/engine/machine/runs/readiness.js';
import type { ProcessInfo } from '../../../../src/platform/index.js';
import { factsWith, looked, routeTo } from '../../../helpers/machine.js';

// --listen in the pure step: who of a run took a held socket, when a socket is shut down (no run follows; in the
// final stop once its takers closed it or left, or at the kill timeout), the check before a restart, and the
// warning for a run that took none. One row per decision.

const listen = { names: ['web', 'admin'], preload: true };
const facts = factsWith({ listen });
const kinds = (effects: Effect[]) => effects.map((effect) => effect.kind);
const shuts = (effects: Effect[]) =>
  effects.flatMap((effect) => (effect.kind === 'shut-sockets' ? [[...effect.names]] : []));
const warnings = (effects: Effect[]) =>
  effects.flatMap((effect) => (effect.kind === 'log' && effect.level === 'warn' ? [effect.message] : []));
const info = (pid: number): ProcessInfo => ({
  pid,
  ppid: 1,
  pgid: 500,
  sid: 500,
  state: 'S',
  startTime: pid,
  name: 'node',
});

const taken = (name: string, pid: number, run = 1, seen: 'word' | 'kernel' = 'word'): Input => ({
  kind: 'socket-taken',
  run,
  name,
  pid,
  seen,
});
const closed = (name: string, pid: number, run = 1): Input => ({ kind: 'socket-closed', run, name, pid });
const exit = (code: number, run = 1): Input => ({
  kind: 'command-exit',
  run,
  exit: { code, signal: null },
  sent: new Set(),
  treeGone: true,
  mayHaveDaemon: false,
  wrapper: false,
});
const stopSignal: Input = { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' };

/** Each input in turn, from `state`: the state after, and every effect on the way. */
function steps(state: State, inputs: Input[], config: Partial<MachineConfig> = {}) {
  const effects: Effect[] = [];
  for (const input of inputs) {
    const next = step(state, input, facts(config));
    state = next.state;
    effects.push(...next.effects);
  }
  return { state, effects };
}

/** Run 1 started with the sockets open. */
const running = () => step(initialState(), { kind: 'start', stopFirst: undefined }, facts()).state;

describe('--listen: the held sockets in the pure step', () => {
  it('the start: every socket open, run 1 spawned at once (its sockets were bound and checked just now)', () => {
    const { state, effects } = step(initialState(), { kind: 'start', stopFirst: undefined }, facts());
    expect(kinds(effects)).toEqual(['spawn', 'set-timer']);
    expect(effects[1]).toEqual({ kind: 'set-timer', name: 'untaken', ms: 10_000 });
    expect(state.tally.open).toEqual(['web', 'admin']);
    // Without --listen: nothing open, nothing to check.
    const plain = step(initialState(), { kind: 'start', stopFirst: undefined }, facts({ listen: undefined }));
    expect(plain.state.tally.open).toBeUndefined();
  });

  it('a restart: the sockets are checked before the next spawn; all listening, it starts', () => {
    const { state: waiting, effects } = steps(running(), [exit(1), { kind: 'timer', name: 'restart-delay' }], {
      restart: 'always',
    });
    expect(waiting.phase).toBe('restarting');
    expect(effects.at(-1)).toEqual({ kind: 'check-sockets', run: 2 });
    expect(kinds(effects)).not.toContain('spawn');
    const next = step(waiting, { kind: 'sockets-checked', run: 2, lost: [] }, facts({ restart: 'always' }));
    expect(next.state.phase).toBe('running');
    expect(next.effects).toContainEqual({ kind: 'spawn', run: 2 });
    // Without --listen the delay spawns at once.
    const plain = steps(
      step(initialState(), { kind: 'start', stopFirst: undefined }, facts({ listen: undefined })).state,
      [exit(1), { kind: 'timer', name: 'restart-delay' }],
      { restart: 'always', listen: undefined },
    );
    expect(plain.effects).toContainEqual({ kind: 'spawn', run: 2 });
  });

  it('a restart: a socket that cannot be had again (its port taken) gives restarts up, and shuts the rest down', () => {
    const { state: waiting } = steps(running(), [exit(1), { kind: 'timer', name: 'restart-delay' }], {
      restart: 'always',
    });
    const { state, effects } = step(waiting, { kind: 'sockets-checked', run: 2, lost: ['web'] }, facts());
    expect(state.phase).toBe('ending');
    expect(kinds(effects)).not.toContain('spawn');
    expect(warnings(effects)).toEqual([
      'restarts given up: the held socket(s) web cannot be bound again (the port is taken)',
    ]);
    expect(shuts(effects)).toEqual([['web', 'admin']]);
    // An answer for another run, or in another phase, changes nothing.
    expect(step(waiting, { kind: 'sockets-checked', run: 3, lost: [] }, facts()).effects).toEqual([]);
    expect(step(running(), { kind: 'sockets-checked', run: 2, lost: [] }, facts()).effects).toEqual([]);
  });

  it('no run follows (an exit with no restart, restarts given up, a stop during the delay): all shut down, once', () => {
    const ended = steps(running(), [exit(0)]);
    expect(ended.state.phase).toBe('ending');
    expect(shuts(ended.effects)).toEqual([['web', 'admin']]);
    expect(ended.state.tally.open).toEqual([]);
    expect(shuts(step(ended.state, { kind: 'timer', name: 'finish' }, facts()).effects)).toEqual([]);
    const gaveUp = steps(running(), [exit(1)], { restart: 'on-failure', maxRestarts: 0 });
    expect(warnings(gaveUp.effects).some((line) => line.includes('giving up'))).toBe(true);
    expect(shuts(gaveUp.effects)).toEqual([['web', 'admin']]);
    const cancelled = steps(running(), [exit(1), stopSignal], { restart: 'always' });
    expect(shuts(cancelled.effects)).toEqual([['web', 'admin']]);
    // A restart to come keeps them: the queue holds what comes meanwhile, and /readyz says restarting.
    const restarting = steps(running(), [exit(1)], { restart: 'always' });
    expect(shuts(restarting.effects)).toEqual([]);
    expect(readiness(restarting.state, undefined)).toEqual({ ready: false, reason: 'restarting' });
  });

  it('the final stop: a socket is shut down once the process that took it said it closed it; the other stays', () => {
    const { state: stopping, effects } = steps(running(), [taken('web', 501), taken('admin', 502), stopSignal]);
    expect(state(stopping)).toBe('stopping');
    expect(shuts(effects)).toEqual([]); // the stop signal first: the app closes its servers itself
    const webClosed = step(stopping, closed('web', 501), facts());
    expect(shuts(webClosed.effects)).toEqual([['web']]);
    expect(webClosed.state.tally.open).toEqual(['admin']);
    // A word of another run, or of a process that did not take it, shuts nothing.
    expect(shuts(step(stopping, closed('web', 501, 2), facts()).effects)).toEqual([]);
    expect(shuts(step(stopping, closed('web', 777), facts()).effects)).toEqual([]);
  });

  it('the final stop: a taker gone (a look no longer finds it: an exit says no word) shuts its socket down', () => {
    const { state: stopping } = steps(running(), [taken('web', 501), stopSignal]);
    const still = step(stopping, looked([info(500), info(501)], 500), facts());
    expect(shuts(still.effects)).toEqual([]);
    const gone = step(stopping, looked([info(500)], 500, routeTo([])), facts());
    expect(shuts(gone.effects)).toEqual([['web']]);
    // Shut first, then the stop round of that same look.
    expect(kinds(gone.effects).indexOf('shut-sockets')).toBeLessThan(kinds(gone.effects).indexOf('stop-round'));
  });

  it("the final stop: the report channel's end (every holder gone) shuts down every socket, taken or not", () => {
    const { state: stopping } = steps(running(), [taken('web', 501), stopSignal]);
    const ended = step(stopping, { kind: 'report-closed', run: 1 }, facts());
    expect(shuts(ended.effects)).toEqual([['web', 'admin']]);
  });

  it("the final stop: the report channel's end leaves a taker the kernel showed (it may live on without it)", () => {
    const { state: stopping } = steps(running(), [taken('web', 501), taken('admin', 601, 1, 'kernel'), stopSignal]);
    const ended = step(stopping, { kind: 'report-closed', run: 1 }, facts());
    expect(shuts(ended.effects)).toEqual([['web']]);
    // Once a look no longer finds it, nothing of the run holds any: the rest goes too.
    expect(shuts(step(ended.state, looked([info(500)], 500), facts()).effects)).toEqual([['admin']]);
  });

  it('the final stop: at the kill timeout whatever still holds a socket stops listening, before the SIGKILL rounds', () => {
    const { state: stopping } = steps(running(), [taken('web', 501), stopSignal]);
    const killing = step(stopping, { kind: 'timer', name: 'kill-timeout' }, facts());
    expect(state(killing.state)).toBe('killing');
    expect(shuts(killing.effects)).toEqual([['web', 'admin']]);
  });

  it('a stop before a restart (leftovers, failed health checks) keeps every socket: the next run takes them', () => {
    const { state: stopping } = steps(running(), [taken('web', 501), { kind: 'health', run: 1, unhealthy: true }], {
      restart: 'always',
    });
    expect(state(stopping)).toBe('stopping');
    const closing = steps(stopping, [
      closed('web', 501),
      { kind: 'report-closed', run: 1 },
      { kind: 'timer', name: 'kill-timeout' },
    ]);
    expect(shuts(closing.effects)).toEqual([]);
    // The stop delay is no final stop yet either: the app still serves.
    const delayed = steps(running(), [taken('web', 501), stopSignal, closed('web', 501)], { stopDelay: 5000 });
    expect(state(delayed.state)).toBe('stop-delay');
    expect(shuts(delayed.effects)).toEqual([]);
  });

  it('which run took a socket is said once per run and socket (-v); a word for another run counts for nothing', () => {
    const first = steps(running(), [taken('web', 501), taken('web', 502), taken('nope', 503), taken('web', 504, 2)]);
    const lines = first.effects.flatMap((effect) => (effect.kind === 'log' ? [effect.message] : []));
    expect(lines).toEqual(['run 1: pid 501 took the held socket web (its word)']);
    const run = 'run' in first.state ? first.state.run : undefined;
    expect(run?.held?.took).toEqual(['web']);
    expect(run?.held?.takers).toEqual([
      { name: 'web', pid: 501, seen: 'word' },
      { name: 'web', pid: 502, seen: 'word' },
    ]);
  });

  it('a run that ends by itself having taken no socket: one warning, with the likely causes', () => {
    const { effects } = steps(running(), [exit(1)], { restart: 'always' });
    expect(warnings(effects)).toEqual([
      'run 1 ended without any process taking a held socket (web, admin): ' +
        "the app listens on another port or address (left to it), gsup's preload did not load (a script reset " +
        "NODE_OPTIONS), or the server is no Node's (a native one, Bun)",
    ]);
    const noPreload = steps(running(), [exit(1)], { listen: { ...listen, preload: false } });
    expect(warnings(noPreload.effects)).toEqual([
      'run 1 ended without any process taking a held socket (web, admin): ' +
        'the app does not use LISTEN_FDS (fds 3…), and --no-listen-preload leaves NODE_OPTIONS alone',
    ]);
    // Taken: no warning; a command that could not be started, or a stop asked for, is no such run.
    expect(warnings(steps(running(), [taken('admin', 501), exit(1)]).effects)).toEqual([]);
    const notFound: Input = {
      ...(exit(127) as Extract<Input, { kind: 'command-exit' }>),
      exit: { code: null, signal: null, errorCode: 'ENOENT' },
    };
    expect(warnings(steps(running(), [notFound]).effects)).toEqual([]);
    expect(warnings(steps(running(), [stopSignal, exit(0)]).effects)).toEqual([]);
  });

  it('a run that reaches its ready timeout having taken no socket: warned then, and not again at its end', () => {
    const config = { waitReady: true, readyTimeout: 5000 };
    const start = step(initialState(), { kind: 'start', stopFirst: undefined }, facts(config)).state;
    const timedOut = steps(start, [{ kind: 'timer', name: 'ready-timeout' }, exit(143)], config);
    expect(warnings(timedOut.effects)).toEqual([
      expect.stringMatching(/^run 1 reached its ready timeout without any process taking a held socket/),
      expect.stringMatching(/did not say it was ready within/),
    ]);
  });
});

/** The phase, read here (machine tests may: the shell may not). */
const state = (value: State) => value.phase;
