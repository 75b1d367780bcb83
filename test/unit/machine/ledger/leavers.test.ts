import { describe, expect, it } from 'vitest';
import { leaverHad } from '../../../../src/engine/machine/ledger/continuity.js';
import {
  EMPTY_LEDGER,
  processKey,
  roundSent,
  stopRound,
  type Target,
} from '../../../../src/engine/machine/ledger/ledger.js';
import { initialState, step, type Effect, type Input, type State } from '../../../../src/engine/machine/step.js';
import type { GroupLeaver, ProcessInfo, SendMoment, SignalName } from '../../../../src/platform/index.js';
import { factsWith, looked, routeTo } from '../../../helpers/machine.js';

// A member planned for a group send, found outside the group right after it (it left with setsid or setpgid:
// before the send, or after). What the kernel shows of the signal in it then decides whether it had it.

const facts = factsWith();
const at = (pid: number, pgid = 500, ppid = 500): ProcessInfo => ({
  pid,
  ppid,
  pgid,
  sid: 500,
  state: 'S',
  startTime: pid,
  name: 'sh',
});
const sh = at(500, 500, 1);
const job = at(501);
const moment: SendMoment = { tick: 2000, lastPid: 700, pidMax: 32_768 };
const group = (...members: ProcessInfo[]): Target => ({ kind: 'group', pgid: 500, members });
const one = (info: ProcessInfo): Target => ({ kind: 'process', process: info });
type State4 = NonNullable<GroupLeaver['signal']>;
const signal = (set: Partial<State4>): State4 => ({
  pending: false,
  blocked: false,
  ignored: false,
  caught: false,
  ...set,
});
const left = (state: State4 | undefined): GroupLeaver => ({ info: job, pgid: 501, signal: state });

describe('leaverHad: had the signal a member found outside its group right after the group send?', () => {
  const rows: Array<{ name: string; state: State4 | undefined; stop?: SignalName; verdict: string }> = [
    { name: 'pending (blocked, or not handled yet): it had it', state: signal({ pending: true }), verdict: 'had' },
    {
      name: 'pending and caught: it had it (the handler has still to run)',
      state: signal({ pending: true, caught: true }),
      verdict: 'had',
    },
    { name: 'ignored: nothing to send', state: signal({ ignored: true }), verdict: 'ignored' },
    {
      name: 'no handler, not blocked, alive: the default action would have ended it, so it left before: missed',
      state: signal({}),
      verdict: 'missed',
    },
    { name: 'the same for SIGINT', state: signal({}), stop: 'SIGINT', verdict: 'missed' },
    {
      name: 'a handler, nothing pending: it may have run (left after) or not (left before): unsure',
      state: signal({ caught: true }),
      verdict: 'unsure',
    },
    {
      name: 'blocked, nothing pending: it may have been taken by sigwait or a signalfd: unsure',
      state: signal({ blocked: true }),
      verdict: 'unsure',
    },
    {
      name: 'a signal whose default action does not end a process: unsure',
      state: signal({}),
      stop: 'SIGCONT',
      verdict: 'unsure',
    },
    { name: 'its status not read (gone meanwhile): unsure', state: undefined, verdict: 'unsure' },
  ];
  it.each(rows)('$name', ({ state, stop = 'SIGTERM', verdict }) => {
    expect(leaverHad(left(state), stop)).toBe(verdict);
  });
});

describe('the ledger: a member that left before the send is not reached; one it cannot tell is', () => {
  function sentWith(leaver: GroupLeaver) {
    const first = stopRound(EMPTY_LEDGER, routeOf([group(sh, job)]), [sh, job], undefined, false);
    expect(first.fresh).toEqual([group(sh, job)]);
    return roundSent(first.ledger, [{ pgid: 500, moment, left: [leaver] }], 'SIGTERM');
  }
  const routeOf = (targets: Target[]) => ({ ...routeTo(targets), relayers: new Set<string>() });
  // The next look: sh died of the signal, the job (a group of its own now) is a root.
  const out = at(501, 501, 1);

  it.each([
    { name: 'missed: sent the signal at the next round where it is a root', state: signal({}), again: true },
    { name: 'had (pending): never again', state: signal({ pending: true }), again: false },
    { name: 'ignored: never again', state: signal({ ignored: true }), again: false },
    { name: 'unsure (a handler): never again, at most once', state: signal({ caught: true }), again: false },
  ])('$name', ({ state, again }) => {
    const { ledger, leavers } = sentWith(left(state));
    expect(ledger.reached.has(processKey(job))).toBe(!again);
    expect(leavers.missed.length).toBe(again ? 1 : 0);
    const next = stopRound(ledger, routeOf([one(out)]), [out], undefined, false);
    expect(next.fresh).toEqual(again ? [one(out)] : []);
    // Once sent, it is reached: never a third time.
    expect(stopRound(next.ledger, routeOf([one(out)]), [out], undefined, false).fresh).toEqual([]);
  });

  it('no member outside: the ledger as before (the groups get their moments)', () => {
    const first = stopRound(EMPTY_LEDGER, routeOf([group(sh, job)]), [sh, job], undefined, false);
    const { ledger, leavers } = roundSent(first.ledger, [{ pgid: 500, moment }], 'SIGTERM');
    expect(leavers).toEqual({ missed: [], unsure: [] });
    expect(ledger.reached).toBe(first.ledger.reached);
    expect(ledger.sent[0].moment).toEqual(moment);
  });
});

describe('the machine: the round, its delivery’s word with the members outside, and the next look', () => {
  const running: State = { phase: 'running', tally: initialState().tally, run: { id: 1, startedAt: 0, app: 'ready' } };
  const out = at(501, 501, 1);

  function run(state4: State4): { rounds: Target[][]; logs: string[] } {
    let state = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' }, facts()).state;
    const rounds: Target[][] = [];
    const logs: string[] = [];
    const inputs: Input[] = [
      looked([sh, job], 500, routeTo([group(sh, job)])),
      { kind: 'round-sent', groups: [{ pgid: 500, moment, left: [left(state4)] }] },
      looked([out], 500, routeTo([one(out)])),
    ];
    for (const input of inputs) {
      const next = step(state, input, facts());
      for (const effect of next.effects as Effect[]) {
        if (effect.kind === 'stop-round') rounds.push(effect.targets);
        if (effect.kind === 'log' && effect.event === 'left-group') logs.push(`${effect.level}: ${effect.message}`);
      }
      state = next.state;
    }
    return { rounds, logs };
  }

  it('missed: the next round sends it the stop signal; -v says it left before the send', () => {
    const { rounds, logs } = run(signal({}));
    expect(rounds).toEqual([[group(sh, job)], [one(out)]]);
    expect(logs).toEqual([
      'info: pid 501 left group 500 for group 501 before SIGTERM went to 500 (not pending, no handler: it would have ended it)',
    ]);
  });

  it('unsure: nothing more is sent; -v says it counts as reached', () => {
    const { rounds, logs } = run(signal({ caught: true }));
    expect(rounds).toEqual([[group(sh, job)], []]);
    expect(logs).toEqual([
      "info: pid 501 left group 500 for group 501 around SIGTERM's send to 500 " +
        '(not pending; a handler or a mask: it may have had it): counted as reached',
    ]);
  });
});
