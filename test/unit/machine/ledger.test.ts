import { describe, expect, it } from 'vitest';
import {
  EMPTY_LEDGER,
  membersOf,
  processKey,
  stopRound,
  type Ledger,
  type RoundRoute,
  type Target,
} from '../../../src/engine/machine/ledger.js';
import { initialState, step, type Effect, type Input, type State } from '../../../src/engine/machine/step.js';
import type { ProcessInfo } from '../../../src/platform/index.js';
import { factsWith, looked, routeTo } from '../../helpers/machine.js';
import type { Pm2Manager } from '../../../src/engine/machine/values.js';

// The stop's ledger, pure: who has had the stop signal. The product's promise — each process gets the stop
// signal exactly once — as tables: one round at a time, then the machine over sequences of looks.

const facts = factsWith();

function proc(pid: number, pgid = pid, ppid = 1, startTime = pid): ProcessInfo {
  return { pid, ppid, pgid, sid: pgid, state: 'S', startTime, name: 'app' };
}
const one = (info: ProcessInfo): Target => ({ kind: 'process', process: info });
const group = (...members: ProcessInfo[]): Target => ({ kind: 'group', pgid: members[0].pgid, members });
const daemon = (info: ProcessInfo): Pm2Manager => ({
  info,
  kind: 'daemon',
  proof: { home: '/pm2', from: 'gsup', user: undefined },
});

function route(targets: Target[], pm2: { kill?: Pm2Manager[]; managed?: number[]; commandPid?: number } = {}) {
  const result: RoundRoute<Pm2Manager> = {
    targets,
    pm2Kill: pm2.kill ?? [],
    managed: new Set(pm2.managed ?? []),
    commandPid: pm2.commandPid,
  };
  return result;
}

/** Every process a round sends the stop signal to, by identity. */
const keys = (targets: Target[]) => targets.flatMap(membersOf).map(processKey).sort();

describe('the ledger, one round at a time', () => {
  const app = proc(500);
  const worker = proc(501, 500, 500);
  const orphan = proc(600);

  // Each row: the ledger before (built by earlier rounds), the round's route and look, and who gets the signal now.
  const rows: Array<{
    name: string;
    before: Array<{ targets: Target[]; alive: ProcessInfo[] }>;
    targets: Target[];
    alive: ProcessInfo[];
    fresh: string[];
  }> = [
    {
      name: 'a first round: every root, whole groups whole',
      before: [],
      targets: [group(app, worker), one(orphan)],
      alive: [app, worker, orphan],
      fresh: keys([group(app, worker), one(orphan)]),
    },
    {
      name: 'the same roots again: nobody (none gets it twice)',
      before: [{ targets: [group(app, worker), one(orphan)], alive: [app, worker, orphan] }],
      targets: [group(app, worker), one(orphan)],
      alive: [app, worker, orphan],
      fresh: [],
    },
    {
      name: 'a root that appeared since: it alone',
      before: [{ targets: [group(app, worker)], alive: [app, worker] }],
      targets: [group(app, worker), one(orphan)],
      alive: [app, worker, orphan],
      fresh: keys([one(orphan)]),
    },
    {
      name: 'a group partly reached (one was signalled alone, another joined): its other members, one by one',
      before: [{ targets: [one(app)], alive: [app] }],
      targets: [group(app, proc(503, 500, 1))],
      alive: [app, proc(503, 500, 1)],
      fresh: keys([one(proc(503, 500, 1))]),
    },
    {
      name: 'forked into a reached group, its parent alive: the parent’s (a cleanup helper)',
      before: [{ targets: [group(app, worker)], alive: [app, worker] }],
      targets: [one(proc(502, 500, 501))],
      alive: [app, worker, proc(502, 500, 501)],
      fresh: [],
    },
    {
      name: 'in a reached group, its parent gone: a root of its own, sent the signal',
      before: [{ targets: [group(app, worker)], alive: [app, worker] }],
      targets: [one(proc(502, 500, 501))],
      alive: [proc(502, 500, 501)],
      fresh: keys([one(proc(502, 500, 501))]),
    },
    {
      name: 'a reused pid (another start time) is a stranger: sent the signal',
      before: [{ targets: [one(orphan)], alive: [orphan] }],
      targets: [one(proc(600, 600, 1, 9999))],
      alive: [proc(600, 600, 1, 9999)],
      fresh: keys([one(proc(600, 600, 1, 9999))]),
    },
  ];

  it.each(rows)('$name', ({ before, targets, alive, fresh }) => {
    let ledger: Ledger = EMPTY_LEDGER;
    for (const earlier of before)
      ledger = stopRound(ledger, route(earlier.targets), earlier.alive, undefined, false).ledger;
    const frozen = ledger;
    const round = stopRound(ledger, route(targets), alive, undefined, false);
    expect(keys(round.fresh)).toEqual(fresh);
    expect(ledger).toBe(frozen); // pure: the ledger before is untouched
    for (const key of fresh) expect(round.ledger.reached.has(key)).toBe(true);
    // And once more on the same look: nobody.
    expect(stopRound(round.ledger, route(targets), alive, undefined, false).fresh).toEqual([]);
  });

  it('a stop signal received again goes to everyone reached (this round’s too), never to the others', () => {
    const first = stopRound(EMPTY_LEDGER, route([one(app)]), [app], undefined, false);
    const second = stopRound(first.ledger, route([one(app), one(orphan)]), [app, orphan], 'SIGINT', false);
    expect(keys(second.fresh)).toEqual(keys([one(orphan)]));
    expect(second.again?.signal).toBe('SIGINT');
    expect(keys(second.again!.targets)).toEqual(keys([one(app), one(orphan)]));
    // Nobody reached: nothing to send it to.
    expect(stopRound(EMPTY_LEDGER, route([]), [], 'SIGINT', false).again).toBeUndefined();
  });

  it('pm2: a God daemon gets `pm2 kill` once, and what it runs counts as reached', () => {
    const god = proc(700);
    const app = proc(701, 701, 700);
    const pm2 = { kill: [daemon(god)], managed: [700, 701] };
    const first = stopRound(EMPTY_LEDGER, route([], pm2), [god, app], undefined, true);
    expect(first.pm2Kill.map((manager) => manager.info.pid)).toEqual([700]);
    expect(first.ledger.reached.has(processKey(app))).toBe(true);
    expect(stopRound(first.ledger, route([], pm2), [god, app], undefined, true).pm2Kill).toEqual([]);
    // A stop signal received again reaches what pm2 runs only through pm2: it is no target of gsup's.
    expect(stopRound(first.ledger, route([one(app)], pm2), [god, app], 'SIGINT', true).fresh).toEqual([]);
  });

  it('pm2: gsup’s own `pm2 kill` waits while a command that is no daemon runs on (its trap stops pm2)', () => {
    const god = proc(700);
    const pm2 = { kill: [daemon(god)], managed: [700], commandPid: 500 };
    const held = stopRound(EMPTY_LEDGER, route([], pm2), [god], undefined, false);
    expect(held.pm2Kill).toEqual([]);
    expect(held.ledger.pm2Killed.size).toBe(0);
    // Once the command is gone, or when the command is the daemon itself: now.
    expect(stopRound(held.ledger, route([], pm2), [god], undefined, true).pm2Kill).toHaveLength(1);
    const itself = { ...pm2, commandPid: 700 };
    expect(stopRound(EMPTY_LEDGER, route([], itself), [god], undefined, false).pm2Kill).toHaveLength(1);
  });
});

describe('the ledger in the machine: every process gets the stop signal once, whatever comes between looks', () => {
  const app = proc(500);
  const worker = proc(501, 500, 500);
  const late = proc(600);
  const stranger = proc(600, 600, 1, 9999);
  const tree = (...alive: ProcessInfo[]) => looked(alive, 500, routeTo(alive.map(one)));

  // Sequences of inputs after a running command gets SIGTERM; each look's route names every process alive.
  const sequences: Array<{ name: string; inputs: Input[]; sentOnce: string[]; again?: string[] }> = [
    {
      name: 'looks that find the same tree',
      inputs: [tree(app, worker), tree(app, worker), tree(app, worker)],
      sentOnce: keys([one(app), one(worker)]),
    },
    {
      name: 'a process that joins between looks',
      inputs: [tree(app), tree(app, late), tree(app, late)],
      sentOnce: keys([one(app), one(late)]),
    },
    {
      name: 'a pid reused between looks',
      inputs: [tree(app, late), tree(app), tree(app, stranger)],
      sentOnce: keys([one(app), one(late), one(stranger)]),
    },
    {
      name: 'a second stop signal: forwarded once to everyone reached, then nothing more',
      inputs: [
        tree(app),
        { kind: 'stop-signal', signal: 'SIGINT', reason: 'SIGINT received' },
        tree(app, late),
        tree(app, late),
      ],
      sentOnce: keys([one(app), one(late)]),
      again: keys([one(app), one(late)]),
    },
    {
      name: 'a second stop signal before the first went out: it follows the first, to the same roots',
      inputs: [{ kind: 'stop-signal', signal: 'SIGINT', reason: 'SIGINT received' }, tree(app), tree(app)],
      sentOnce: keys([one(app)]),
      again: keys([one(app)]),
    },
  ];

  it.each(sequences)('$name', ({ inputs, sentOnce, again = [] }) => {
    const running: State = {
      phase: 'running',
      tally: initialState().tally,
      run: { id: 1, startedAt: 0, app: 'ready' },
    };
    let state = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' }, facts()).state;
    const rounds: Array<Extract<Effect, { kind: 'stop-round' }>> = [];
    for (const input of inputs) {
      const next = step(state, input, facts());
      for (const effect of next.effects) if (effect.kind === 'stop-round') rounds.push(effect);
      state = next.state;
    }
    const sent = rounds.flatMap((round) => keys(round.targets));
    expect(sent.sort()).toEqual(sentOnce);
    expect(rounds.every((round) => round.signal === 'SIGTERM')).toBe(true);
    const sentAgain = rounds.flatMap((round) => (round.again ? keys(round.again.targets) : []));
    expect(sentAgain.sort()).toEqual(again);
    expect(rounds.filter((round) => round.again).length).toBeLessThanOrEqual(1);
  });

  it('every phase: only a stop round sends the stop signal, and only while stopping', () => {
    const running: State = {
      phase: 'running',
      tally: initialState().tally,
      run: { id: 1, startedAt: 0, app: 'ready' },
    };
    const stopping = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'x' }, facts()).state;
    const delayed = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'x' }, facts({ stopDelay: 5000 }));
    for (const state of [initialState(), running, stopping, delayed.state]) {
      const { effects } = step(state, tree(app), facts());
      const rounds = effects.filter((effect) => effect.kind === 'stop-round');
      expect(rounds).toHaveLength(state === stopping ? 1 : 0);
    }
    // The stop delay counts who is there (for the summary), and sends nothing.
    expect(step(delayed.state, tree(app), facts()).effects.map((effect) => effect.kind)).toEqual(['count-seen']);
  });
});
