import { describe, expect, it } from 'vitest';
import {
  initialState,
  step,
  type Effect,
  type Input,
  type Phase,
  type State,
} from '../../../src/engine/machine/step.js';
import type { Stop } from '../../../src/engine/machine/state.js';
import { EMPTY_LEDGER } from '../../../src/engine/machine/ledger/ledger.js';
import { isWrapper } from '../../../src/engine/machine/outcomes/exit-status.js';
import { readiness } from '../../../src/engine/machine/runs/readiness.js';
import { factsWith, looked, routeTo } from '../../helpers/machine.js';
import type { ProcessInfo } from '../../../src/platform/index.js';
import type { CommandExit } from '../../../src/engine/machine/values.js';

// The machine alone: pure, no process, no timer. Every phase × every input,
// then the decisions that matter most, one by one.

const facts = factsWith();

const tally = initialState().tally;
const run = { id: 1, startedAt: 0, app: 'ready' } as const;
const exit0 = { code: 0, signal: null };
const stop = (overrides: Partial<Stop> = {}): Stop => ({
  signal: 'SIGTERM',
  then: 'exit',
  cause: 'signal',
  received: 1,
  again: undefined,
  plan: undefined,
  ledger: EMPTY_LEDGER,
  ...overrides,
});
const info = (pid: number, pgid: number): ProcessInfo => ({
  pid,
  ppid: 1,
  pgid,
  sid: pgid,
  state: 'S',
  startTime: pid,
  name: 'app',
});

/** One state of every phase, with the data it needs. */
const PHASES: { [P in Phase]: State } = {
  starting: initialState(),
  running: { phase: 'running', tally: { ...tally, runs: 1 }, run },
  exited: { phase: 'exited', tally, run, exit: exit0, restart: undefined },
  daemons: { phase: 'daemons', tally: { ...tally, stayed: true }, run, exit: exit0 },
  restarting: {
    phase: 'restarting',
    tally,
    run,
    exit: { code: 1, signal: null },
    restart: { delayMs: 1000, reason: 'exited with code 1 (restart 1 of 10)' },
  },
  'stop-delay': { phase: 'stop-delay', tally, run, exit: undefined, stop: stop() },
  stopping: { phase: 'stopping', tally, run, exit: undefined, stop: stop() },
  killing: { phase: 'killing', tally, run, exit: undefined, stop: stop(), killStartedAt: 99_000 },
  ending: { phase: 'ending', tally, run, exit: exit0 },
  done: { phase: 'done', tally, exitCode: 0, exit: exit0 },
};

const INPUTS: Input[] = [
  { kind: 'start', stopFirst: undefined },
  { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' },
  { kind: 'stop-signal', signal: 'SIGKILL', reason: 'SIGTERM received' },
  { kind: 'command-exit', run: 1, exit: exit0, sent: new Set(), treeGone: true, mayHaveDaemon: false, wrapper: false },
  { kind: 'reaped', exits: [{ code: 4, signal: null }] },
  { kind: 'child-gone', treeGone: true },
  { kind: 'child-gone', treeGone: false },
  looked([], undefined),
  looked([info(600, 600)], 500),
  looked([info(600, 600)], 500, routeTo([{ kind: 'process', process: info(600, 600) }])), // a stop round's route
  { kind: 'round-sent', groups: [{ pgid: 600, moment: { tick: 700, lastPid: 600, pidMax: 32_768 } }] },
  { kind: 'round-sent', groups: [] },
  ...(['stop-delay', 'kill-timeout', 'restart-delay', 'check', 'finish', 'health', 'ready-timeout'] as const).map(
    (name): Input => ({ kind: 'timer', name }),
  ),
  { kind: 'health', run: 1, unhealthy: true },
  { kind: 'health', run: 1, unhealthy: false },
  { kind: 'app-said', run: 1, word: 'ready', via: 'READY=1 on NOTIFY_SOCKET' },
  { kind: 'app-said', run: 1, word: 'stopping', via: 'STOPPING=1 on NOTIFY_SOCKET' },
  { kind: 'swept', notYet: 0 },
  { kind: 'swept', notYet: 2 },
  { kind: 'fault', message: 'boom' },
  // --listen (test/unit/machine/held/held.test.ts has their decisions)
  { kind: 'socket-taken', run: 1, name: 'web', pid: 600, seen: 'word' },
  { kind: 'socket-closed', run: 1, name: 'web', pid: 600 },
  { kind: 'report-closed', run: 1 },
  { kind: 'sockets-checked', run: 2, lost: [] },
  { kind: 'sockets-checked', run: 2, lost: ['web'] },
  // --reload-signal (test/unit/machine/runs/reload.test.ts has their decisions, and every input during a reload)
  { kind: 'reload', reason: 'SIGHUP received' },
  { kind: 'round-sent', run: 1, groups: [{ pgid: 600, moment: { tick: 700, lastPid: 600, pidMax: 32_768 } }] },
  ...(['next-ready-timeout', 'retire-kill-timeout'] as const).map((name): Input => ({ kind: 'timer', name })),
];

const kinds = (effects: Effect[]) => effects.map((effect) => effect.kind);
const logged = (effects: Effect[]) => effects.flatMap((effect) => (effect.kind === 'log' ? [effect.message] : []));

describe('step: every phase × every input', () => {
  // Each phase as it is, and with a held socket still open (--listen).
  const listen = { names: ['web'], preload: true };
  const variants = Object.entries(PHASES).flatMap(([phase, state]) => [
    [phase, state, {}] as const,
    [`${phase} (--listen)`, { ...state, tally: { ...state.tally, open: ['web'] } } as State, { listen }] as const,
  ]);
  for (const [phase, state, config] of variants) {
    it.each(INPUTS.map((input) => [`${input.kind} ${JSON.stringify(input).slice(0, 60)}`, input] as const))(
      `${phase} + %s`,
      (_, input) => {
        const before = JSON.stringify(state);
        const { state: next, effects } = step(state, input, facts(config));
        expect(JSON.stringify(state)).toBe(before); // pure: the old state is untouched
        // The end is said once, as an effect, exactly when the phase becomes done.
        expect(kinds(effects).filter((kind) => kind === 'end')).toHaveLength(
          next.phase === 'done' && state.phase !== 'done' ? 1 : 0,
        );
        if (state.phase === 'done') {
          expect(next).toBe(state);
          expect(effects).toEqual([]);
        }
        // A stop that begins is announced and pauses the probes.
        if (kinds(effects).includes('begin-stop')) expect(kinds(effects)).toContain('pause-health');
        // Only an exited supervision exits with a status of 0 after failed health checks.
        const end = effects.find((effect) => effect.kind === 'end');
        if (end?.kind === 'end' && next.tally.unhealthyExit) expect(end.exitCode).not.toBe(0);
        // A held socket is shut down once at most, and only one still open; a spawn never follows the end of one.
        const shut = effects.flatMap((effect) => (effect.kind === 'shut-sockets' ? effect.names : []));
        const open = state.tally.open ?? [];
        expect(shut.every((name) => open.includes(name))).toBe(true);
        expect(next.tally.open ?? []).toEqual(open.filter((name) => !shut.includes(name)));
        if (shut.length > 0) expect(kinds(effects)).not.toContain('spawn');
      },
    );
  }
});

describe('step: the decisions, one by one', () => {
  it('round-sent: the stop’s ledger keeps which planned groups went as groups, and when; no effect, no other phase', () => {
    const moment = { tick: 700, lastPid: 650, pidMax: 32_768 };
    const group = { kind: 'group' as const, pgid: 600, members: [info(600, 600)] };
    const rounded = step(PHASES.stopping, looked([info(600, 600)], 500, routeTo([group])), facts()).state;
    if (rounded.phase !== 'stopping') throw new Error(rounded.phase);
    expect(rounded.stop.ledger.sent).toMatchObject([{ pgid: 600, moment: undefined }]); // planned
    for (const groups of [[{ pgid: 600, moment }], []]) {
      const { state, effects } = step(rounded, { kind: 'round-sent', groups }, facts());
      expect(effects).toEqual([]);
      if (state.phase !== 'stopping') throw new Error(state.phase);
      expect(state.stop.ledger.sent).toEqual(groups.length > 0 ? [expect.objectContaining({ pgid: 600, moment })] : []);
    }
    for (const phase of ['running', 'exited', 'ending'] as const) {
      const input = { kind: 'round-sent' as const, groups: [{ pgid: 600, moment }] };
      expect(step(PHASES[phase], input, facts()).state).toBe(PHASES[phase]);
    }
  });

  it('a stop signal: the first starts the stop (a fresh look, the kill timeout), with the stop delay for SIGTERM only', () => {
    const first = step(
      PHASES.running,
      { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' },
      facts({ stopDelay: 2000 }),
    );
    expect(first.state.phase).toBe('stop-delay');
    expect(first.effects).toContainEqual({ kind: 'set-timer', name: 'stop-delay', ms: 2000 });
    // A look as the delay begins: who was there, so the summary can count what then exits by itself.
    expect(first.effects).toContainEqual({ kind: 'look', delayMs: 0 });
    expect(kinds(first.effects)).not.toContain('stop-round');
    // One line, in the order things happen: the wait, then the stop signal (never "stopping the tree" before the wait).
    expect(logged(first.effects)).toEqual([
      'SIGTERM received: waiting 2.00s before forwarding SIGTERM to the tree (kill timeout 10.00s)',
    ]);
    const int = step(
      PHASES.running,
      { kind: 'stop-signal', signal: 'SIGINT', reason: 'SIGINT received' },
      facts({ stopDelay: 2000 }),
    );
    expect(int.state.phase).toBe('stopping');
    expect(int.effects).toContainEqual({ kind: 'set-timer', name: 'kill-timeout', ms: 10_000 });
    expect(int.effects).toContainEqual({ kind: 'look', delayMs: 0 });
    expect(logged(int.effects)).toEqual(['SIGINT received: stopping the tree with SIGINT (kill timeout 10.00s)']);
  });

  it('leftovers stopped before a restart: the stop says why, the restart line alone carries the count', () => {
    const restart = { delayMs: 1000, reason: 'exited with code 1 (restart 1 of 10)' };
    const exited: State = { phase: 'exited', tally, run, exit: { code: 1, signal: null }, restart };
    const stopping = step(exited, looked([info(600, 600)], 500), facts());
    expect(logged(stopping.effects)).toEqual([
      'command exited (code 1) leaving 1 process(es), before its restart: stopping the tree with SIGTERM (kill timeout 10.00s)',
    ]);
    const restarting = step(stopping.state, { kind: 'child-gone', treeGone: true }, facts());
    expect(restarting.state.phase).toBe('restarting');
    expect(logged(restarting.effects)).toEqual(['command exited with code 1 (restart 1 of 10): restarting in 1.00s']);
  });

  it('the second stop signal is forwarded: held for the next look, then sent to everyone reached', () => {
    const second = step(PHASES.stopping, { kind: 'stop-signal', signal: 'SIGINT', reason: 'SIGINT received' }, facts());
    expect(second.state.phase).toBe('stopping');
    expect(second.state.phase === 'stopping' && second.state.stop.again).toBe('SIGINT');
    expect(second.effects).toContainEqual({ kind: 'look', delayMs: 0 });
    const app = { kind: 'process', process: info(500, 500) } as const;
    const round = step(second.state, looked([info(500, 500)], 500, routeTo([app])), facts());
    expect(round.effects).toContainEqual(
      expect.objectContaining({ kind: 'stop-round', signal: 'SIGTERM', again: { signal: 'SIGINT', targets: [app] } }),
    );
    // Once: the next look sends the stop signal to new roots only.
    const next = step(round.state, looked([info(500, 500)], 500, routeTo([app])), facts());
    expect(next.effects).toContainEqual(
      expect.objectContaining({ kind: 'stop-round', signal: 'SIGTERM', targets: [], again: undefined }),
    );
  });

  it('the third stop signal kills the tree at once', () => {
    const third = step(
      { ...PHASES.stopping, stop: stop({ received: 2 }) } as State,
      { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' },
      facts(),
    );
    expect(third.state.phase).toBe('killing');
    expect(kinds(third.effects)).toEqual(expect.arrayContaining(['clear-timer', 'kill-command-group', 'look']));
    expect(logged(third.effects)).toEqual(['SIGTERM received: third stop signal, killing the tree now']);
  });

  it('a stop signal a rule made SIGKILL (-r TERM:KILL): a stop that kills at once, and ends in the summary', () => {
    const kill: Input = { kind: 'stop-signal', signal: 'SIGKILL', reason: 'SIGTERM received' };
    const killed = step(PHASES.running, kill, facts({ stopDelay: 5000 }));
    expect(killed.state.phase).toBe('killing');
    expect(kinds(killed.effects)).toEqual(['begin-stop', 'pause-health', 'log', 'look']);
    expect(logged(killed.effects)).toEqual(['SIGTERM received: killing the tree (rewritten to SIGKILL)']);
    // Each look kills what it saw (so the summary can name it), until nothing is left.
    const round = step(killed.state, looked([info(500, 500)], 500), facts());
    expect(kinds(round.effects)).toEqual(['kill-round', 'look']);
    const gone = step(round.state, looked([], undefined), facts());
    expect(kinds(gone.effects)).toContain('end-stop');
    // During a stop delay or a stop: kill now, and no restart after.
    const restartStop = stop({ then: 'restart', cause: 'gsup' });
    const cleanup: State = { phase: 'stopping', tally, run, exit: { code: 1, signal: null }, stop: restartStop };
    const now = step(cleanup, kill, facts());
    expect(now.state.phase === 'killing' && now.state.stop.then).toBe('exit');
    expect(step(PHASES['stop-delay'], kill, facts()).state.phase).toBe('killing');
  });

  it('forward first, log after: the SIGKILL, then the line that says so (third stop signal, kill timeout)', () => {
    const thirdSignal: Input = { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' };
    const third = step({ ...PHASES.stopping, stop: stop({ received: 2 }) } as State, thirdSignal, facts());
    const expired = step(PHASES.stopping, { kind: 'timer', name: 'kill-timeout' }, facts());
    for (const { effects } of [third, expired]) {
      expect(kinds(effects)).toContain('log');
      expect(kinds(effects).indexOf('kill-command-group')).toBeLessThan(kinds(effects).indexOf('log'));
    }
  });

  it('a stop signal cancels a restart: during its delay (no spawn, the last status), and during the stop of what the last run left', () => {
    const waiting = step(
      PHASES.restarting,
      { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' },
      facts(),
    );
    expect(waiting.state.phase).toBe('ending');
    expect(kinds(waiting.effects)).not.toContain('spawn');
    expect(logged(waiting.effects)).toEqual(['SIGTERM received: no restart']);
    const plan = { delayMs: 1000, reason: 'exited with code 1 (restart 1 of 10)' };
    const cleanup: State = {
      phase: 'stopping',
      tally,
      run,
      exit: { code: 1, signal: null },
      stop: stop({ then: 'restart', cause: 'gsup', received: 0, plan }),
    };
    const cancelled = step(cleanup, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' }, facts());
    expect(cancelled.state.phase === 'stopping' && cancelled.state.stop.then).toBe('exit');
    const ended = step(cancelled.state, looked([], undefined), facts());
    expect(ended.state.phase).toBe('ending'); // not restarting
    // Without the stop signal, the same stop ends in the restart.
    expect(step(cleanup, looked([], undefined), facts()).state.phase).toBe('restarting');
  });

  it('the restart log counts quick failures only: "restart 1 of 10" after a quick run, "not counted" after a run of 10 s or more (never "restart 0 of 10")', () => {
    const failed: Input = {
      kind: 'command-exit',
      run: 1,
      exit: { code: 1, signal: null },
      sent: new Set(),
      treeGone: true,
      mayHaveDaemon: false,
      wrapper: false,
    };
    const quick = step(PHASES.running, failed, facts({ restart: 'on-failure' }, 2_000));
    expect(logged(quick.effects)).toEqual(['command exited with code 1 (restart 1 of 10): restarting in 1.00s']);
    const long = step(PHASES.running, failed, facts({ restart: 'on-failure' }, 3_600_000));
    expect(logged(long.effects)).toEqual([
      'command exited with code 1 (ran 10s or more: not counted toward --max-restarts 10): restarting in 1.00s',
    ]);
    expect(logged(long.effects).join()).not.toMatch(/restart 0 of/);
  });

  it('after a stop for failed health checks, gsup never exits 0 (an app that exits 0 on SIGTERM has still failed)', () => {
    const unhealthy = step(PHASES.running, { kind: 'health', run: 1, unhealthy: true }, facts());
    expect(unhealthy.state.phase).toBe('stopping');
    const gone = step({ ...unhealthy.state, exit: exit0 } as State, looked([], undefined), facts());
    const end = step(gone.state, { kind: 'swept', notYet: 0 }, facts());
    expect(end.effects.find((effect) => effect.kind === 'end')).toMatchObject({ exitCode: 1 });
  });

  it('--on-exit stop: what the command left is stopped (SIGTERM, no delay, a stop gsup began: the first signal received joins it)', () => {
    const left = step(PHASES.exited, looked([info(600, 600)], 500), facts({ onExit: 'stop', stopDelay: 5000 }));
    expect(left.state.phase).toBe('stopping');
    expect(left.state.phase === 'stopping' && left.state.stop).toMatchObject({
      signal: 'SIGTERM',
      cause: 'gsup',
      received: 0,
    });
    expect(kinds(left.effects)).toContain('begin-stop');
    // auto: exit 0 leaving only daemons outside the command's group → stay for them.
    expect(step(PHASES.exited, looked([info(600, 600)], 500), facts()).state.phase).toBe('daemons');
  });

  it('pairs no test covered before: a fault in the stop delay, the restart wait and the end; a health verdict after the exit; a stop signal while staying for daemons', () => {
    const delayFault = step(PHASES['stop-delay'], { kind: 'fault', message: 'x' }, facts());
    expect(delayFault.state.phase).toBe('stopping'); // the stop signal goes out now
    const restartFault = step(PHASES.restarting, { kind: 'fault', message: 'x' }, facts());
    expect(restartFault.state.phase).toBe('ending');
    expect(kinds(restartFault.effects)).toContain('sweep');
    const endingFault = step(PHASES.ending, { kind: 'fault', message: 'x' }, facts());
    expect(endingFault.state.tally.faults).toBe(1);
    const endOfFault = step(endingFault.state, { kind: 'swept', notYet: 0 }, facts());
    expect(endOfFault.effects.find((effect) => effect.kind === 'end')).toMatchObject({ exitCode: 125 });
    expect(step(PHASES.exited, { kind: 'health', run: 1, unhealthy: true }, facts()).state).toBe(PHASES.exited);
    const daemons = step(
      PHASES.daemons,
      { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' },
      facts(),
    );
    expect(daemons.state.phase).toBe('stopping');
    expect(daemons.state.phase === 'stopping' && daemons.state.exit).toEqual(exit0);
  });

  it('staying for daemons, the last one reaped gives gsup its status', () => {
    const reaped = step(
      PHASES.daemons,
      {
        kind: 'reaped',
        exits: [
          { code: 3, signal: null },
          { code: 4, signal: null },
        ],
      },
      facts(),
    );
    const gone = step(reaped.state, looked([], undefined), facts());
    const end = step(gone.state, { kind: 'swept', notYet: 0 }, facts());
    expect(end.effects.find((effect) => effect.kind === 'end')).toMatchObject({ exitCode: 4 });
  });

  it('a stop signal before the spawn: no spawn, exit 128+N', () => {
    const early = step(initialState(), { kind: 'start', stopFirst: 'SIGINT' }, facts());
    expect(kinds(early.effects)).not.toContain('spawn');
    expect(early.effects.find((effect) => effect.kind === 'end')).toMatchObject({ exitCode: 130 });
  });

  it('killing gives up after 5 s of SIGKILL that does not end what is left', () => {
    const stuck = step(PHASES.killing, looked([info(501, 500)], 500), facts({}, 99_000 + 5001));
    expect(kinds(stuck.effects)).toEqual(expect.arrayContaining(['give-up-killing', 'end-stop']));
    const still = step(PHASES.killing, looked([info(501, 500)], 500), facts({}, 99_000 + 100));
    expect(kinds(still.effects)).toEqual(['kill-round', 'look']);
  });
});

describe('the status behind a wrapper (sh, npm, npx) that died of the stop signal it passed on', () => {
  /** SIGTERM, then these reaped, then the command's exit, then the end: gsup's status and what it logged. */
  function stopped(exits: CommandExit[], command: CommandExit, wrapper = true): { code: number; lines: string[] } {
    const lines: string[] = [];
    const feed = (state: State, input: Input): State => {
      const result = step(state, input, facts());
      lines.push(...logged(result.effects));
      const end = result.effects.find((effect) => effect.kind === 'end');
      return end?.kind === 'end' ? ({ ...result.state, phase: 'done', exitCode: end.exitCode } as State) : result.state;
    };
    let state = feed(PHASES.running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' });
    state = feed(state, { kind: 'reaped', exits });
    const sent = new Set(['SIGTERM'] as const);
    state = feed(state, {
      kind: 'command-exit',
      run: 1,
      exit: command,
      sent,
      treeGone: true,
      mayHaveDaemon: false,
      wrapper,
    });
    state = feed(state, { kind: 'swept', notYet: 0 });
    if (state.phase !== 'done') throw new Error(`not done: ${state.phase}`);
    return { code: state.exitCode, lines };
  }
  const term = { code: null, signal: 'SIGTERM' } as const;

  it('the app behind it exited 0 (gsup reaped it): 0, and -v says why', () => {
    const { code, lines } = stopped([{ code: 0, signal: null }, term], term);
    expect(code).toBe(0);
    expect(lines).toContain(
      'the command died of signal SIGTERM, as a wrapper does when it passes the stop on; what it ran exited (code 0): gsup exits with that',
    );
  });

  it('a failure behind it wins: a code, or gsup’s SIGKILL (137)', () => {
    expect(
      stopped(
        [
          { code: 0, signal: null },
          { code: 3, signal: null },
        ],
        term,
      ).code,
    ).toBe(3);
    expect(stopped([{ code: null, signal: 'SIGKILL' }], term).code).toBe(137);
    expect(stopped([{ code: 0, signal: null }], { code: 143, signal: null }).code).toBe(0); // a shell that says 128+N
  });

  it('the command’s own status stands: nothing reaped exited 0, not a wrapper, or not the stop signal', () => {
    expect(stopped([term], term).code).toBe(143);
    expect(stopped([], term).code).toBe(143);
    expect(stopped([{ code: 0, signal: null }], term, false).code).toBe(143);
    expect(stopped([{ code: 0, signal: null }], { code: 1, signal: null }).code).toBe(1);
  });

  it('a wrapper, by the command’s name as last seen (npm’s title), or its path before any look', () => {
    const wrappers = ['sh', 'bash', 'dash', 'npm start', 'npm exec tsx /w', '/usr/bin/npx', 'pnpm', 'yarn'];
    for (const name of wrappers) expect(isWrapper(name), name).toBe(true);
    for (const name of ['node', 'tsx', 'shx', 'npmx', 'sleep', 'pm2', '/bin/shell'])
      expect(isWrapper(name), name).toBe(false);
  });

  it('a new run starts afresh: what was reaped in an earlier stop does not count', () => {
    const behind = { signal: 'SIGTERM', wrapper: true, zero: true, failure: undefined } as const;
    const restarting = { ...PHASES.restarting, tally: { ...PHASES.restarting.tally, behind } } as State;
    const running = step(restarting, { kind: 'timer', name: 'restart-delay' }, facts()).state;
    expect(running.phase).toBe('running');
    expect(running.tally.behind).toBeUndefined();
  });
});

describe('readiness: what /readyz answers, from the state alone', () => {
  it('ready only while the command runs, its checks (if any) passed, and no stop or restart is under way', () => {
    expect(readiness(PHASES.running, undefined)).toEqual({ ready: true });
    expect(readiness(PHASES.running, 'healthy')).toEqual({ ready: true });
    expect(readiness(PHASES.running, 'starting')).toEqual({ ready: false, reason: 'starting' });
    expect(readiness(PHASES.running, 'failing')).toEqual({ ready: false, reason: 'unhealthy' }); // the last check failed
    expect(readiness(PHASES.daemons, undefined)).toEqual({ ready: true }); // what `pm2 start` handed over runs
    expect(readiness(PHASES.starting, undefined)).toEqual({ ready: false, reason: 'starting' });
    expect(readiness(PHASES.restarting, 'healthy')).toEqual({ ready: false, reason: 'restarting' });
    expect(readiness(PHASES.ending, undefined)).toEqual({ ready: false, reason: 'stopping' });
  });

  it('not ready from the moment a stop signal arrives, before the stop delay', () => {
    const delayed = step(
      PHASES.running,
      { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' },
      facts({ stopDelay: 5000 }),
    ).state;
    expect(delayed.phase).toBe('stop-delay');
    expect(readiness(delayed, 'healthy')).toEqual({ ready: false, reason: 'stopping' });
    const unhealthy = step(PHASES.running, { kind: 'health', run: 1, unhealthy: true }, facts()).state;
    expect(readiness(unhealthy, 'unhealthy')).toEqual({ ready: false, reason: 'unhealthy' });
    const restarting = step(
      PHASES.running,
      { kind: 'health', run: 1, unhealthy: true },
      facts({ restart: 'on-failure' }),
    ).state;
    expect(readiness(restarting, 'unhealthy')).toEqual({ ready: false, reason: 'restarting' });
  });
});
