import { describe, expect, it } from 'vitest';
import { initialState, step, type Effect, type Input, type State } from '../../../../src/engine/machine/step.js';
import { EMPTY_LEDGER } from '../../../../src/engine/machine/ledger/ledger.js';
import { reloadableSignals } from '../../../../src/engine/config/reload-signal.js';
import type { SignalName } from '../../../../src/platform/index.js';
import { factsWith } from '../../../helpers/machine.js';

// A forwarded signal that ends the app (not a stop's) and no restart: one line at the default level says so.

const facts = factsWith();
const tally = { ...initialState().tally, runs: 1 };
const run = { id: 1, startedAt: 98_000, app: 'ready' } as const; // 2 s before facts' now: a quick run
const running: State = { phase: 'running', tally, run };

const diedOf = (signal: SignalName, sent: SignalName[]): Input => ({
  kind: 'command-exit',
  run: 1,
  exit: { code: null, signal },
  sent: new Set(sent),
  treeGone: true,
  mayHaveDaemon: false,
  wrapper: false,
});
const lines = (effects: Effect[]) =>
  effects.flatMap((effect) => (effect.kind === 'log' ? [`${effect.level} ${effect.event}: ${effect.message}`] : []));

describe('a command that dies of a signal gsup forwarded', () => {
  it('on-failure: one warning, the signal, forwarded, not restarted, and --reload-signal with what it needs', () => {
    const { state, effects } = step(running, diedOf('SIGHUP', ['SIGHUP']), facts({ restart: 'on-failure' }));
    expect(state.phase).not.toBe('restarting');
    expect(lines(effects)).toEqual([
      'warn forwarded-death: command died of SIGHUP, which gsup forwarded: not restarted (--restart on-failure: ' +
        'a signal gsup forwarded is no failure); --reload-signal SIGHUP (with --listen or --wait-ready) would make ' +
        'it a reload',
    ]);
    const log = effects.find((effect) => effect.kind === 'log');
    expect(log?.kind === 'log' && log.fields).toEqual({ signal: 'SIGHUP', restart: 'on-failure', reloadable: true });
  });

  it('never, under --wait-ready: the flag alone (the word already says when a new run is ready)', () => {
    const { effects } = step(running, diedOf('SIGUSR2', ['SIGUSR2']), facts({ waitReady: true }));
    expect(lines(effects)).toEqual([
      'warn forwarded-death: command died of SIGUSR2, which gsup forwarded: not restarted (--restart never); ' +
        '--reload-signal SIGUSR2 would make it a reload',
    ]);
  });

  it('no reload hint for a signal that could not be the reload signal (a rule made SIGKILL of it)', () => {
    const { effects } = step(running, diedOf('SIGKILL', ['SIGKILL']), facts());
    expect(lines(effects)).toEqual([
      'warn forwarded-death: command died of SIGKILL, which gsup forwarded: not restarted (--restart never)',
    ]);
  });

  it('with a reload signal set, names it: the signal sent was not the reload signal', () => {
    const { effects } = step(
      running,
      diedOf('SIGHUP', ['SIGHUP']),
      facts({ reload: { signal: 'SIGUSR2', candidates: new Set() }, waitReady: true }),
    );
    expect(lines(effects)).toEqual([
      'warn forwarded-death: command died of SIGHUP, which gsup forwarded: not restarted (--restart never); ' +
        'the reload signal is SIGUSR2',
    ]);
  });

  it('not said: a signal gsup did not send, a restart that follows, a death during a stop', () => {
    // A crash of SIGHUP gsup did not send: on-failure restarts it, with its own line.
    const crash = step(running, diedOf('SIGHUP', []), facts({ restart: 'on-failure' }));
    expect(lines(crash.effects)).toEqual([
      'notice restart: command died of SIGHUP (restart 1 of 10): restarting in 1.00s',
    ]);
    const never = step(running, diedOf('SIGHUP', ['SIGUSR1']), facts());
    expect(lines(never.effects)).toEqual([]);
    const always = step(running, diedOf('SIGHUP', ['SIGHUP']), facts({ restart: 'always' }));
    expect(lines(always.effects)).toEqual([
      'notice restart: command died of SIGHUP (restart 1 of 10): restarting in 1.00s',
    ]);
    const stop = {
      signal: 'SIGTERM',
      then: 'exit',
      cause: 'signal',
      received: 1,
      again: undefined,
      ledger: EMPTY_LEDGER,
      plan: undefined,
    } as const;
    const stopping: State = { phase: 'stopping', tally, run, exit: undefined, stop };
    const during = step(stopping, diedOf('SIGHUP', ['SIGHUP', 'SIGTERM']), facts({ restart: 'on-failure' }));
    expect(lines(during.effects).filter((line) => line.includes('forwarded-death'))).toEqual([]);
  });
});

describe('reloadableSignals: what --reload-signal would take, as received', () => {
  it('not a stop signal, job control, a signal no process catches, nor one a rule rewrites or makes', () => {
    const plain = reloadableSignals(new Map());
    for (const signal of ['SIGHUP', 'SIGUSR1', 'SIGUSR2', 'SIGQUIT', 'SIGWINCH'] as const)
      expect(plain.has(signal)).toBe(true);
    for (const signal of [
      'SIGTERM',
      'SIGINT',
      'SIGTSTP',
      'SIGTTIN',
      'SIGTTOU',
      'SIGKILL',
      'SIGSTOP',
      'SIGCHLD',
    ] as const)
      expect(plain.has(signal)).toBe(false);
    const ruled = reloadableSignals(new Map<SignalName, SignalName | null>([['SIGHUP', 'SIGUSR1']]));
    expect(ruled.has('SIGHUP')).toBe(false); // a rule rewrites it
    expect(ruled.has('SIGUSR1')).toBe(false); // a rule makes it: the app may have had it for a SIGHUP received
    expect(ruled.has('SIGUSR2')).toBe(true);
  });
});
