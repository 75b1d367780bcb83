import { describe, expect, it } from 'vitest';
import {
  EMPTY_LEDGER,
  membersOf,
  processKey,
  roundSent,
  stopRound,
  type Ledger,
  type RoundRoute,
  type Target,
} from '../../../../src/engine/machine/ledger/ledger.js';
import { initialState, step, type Effect, type Input, type State } from '../../../../src/engine/machine/step.js';
import type { ProcessInfo, SendMoment } from '../../../../src/platform/index.js';
import { factsWith, looked, routeTo } from '../../../helpers/machine.js';
import type { Pm2Manager } from '../../../../src/engine/machine/values.js';

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
    relayers: new Set(),
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

describe('group continuity: a member of a group sent the stop signal, there at that moment, has had it', () => {
  // A bootstrap loop: sh (500) leads group 500 in session 500; a job of it (501) was seen at the round's look.
  // The round sends the group the stop signal in tick 2000, the last pid handed out by then being 700. The next
  // look finds X in group 500: who is X?
  const at = (
    pid: number,
    { pgid = 500, ppid = 1, start = pid, sid = 500, state = 'S' }: Partial<Record<string, number | string>> = {},
  ): ProcessInfo => ({
    pid,
    ppid: ppid as number,
    pgid: pgid as number,
    sid: sid as number,
    state: state as string,
    startTime: start as number,
    name: 'sh',
  });
  const sh = at(500, { start: 1500 });
  const job = at(501, { ppid: 500, start: 1600 });
  const moment: SendMoment = { tick: 2000, lastPid: 700, pidMax: 32_768 };

  /** The first round on a look that saw `seen` (group 500 its target), sent as a group at `sent` (or not at all). */
  function afterSend(seen: ProcessInfo[], sent: SendMoment | 'members' = moment): Ledger {
    const inGroup = seen.filter((info) => info.pgid === 500);
    const first = stopRound(EMPTY_LEDGER, route([group(...inGroup)]), seen, undefined, false);
    expect(first.fresh).toEqual([group(...inGroup)]); // the whole group, as a group
    return roundSent(first.ledger, sent === 'members' ? [] : [{ pgid: 500, moment: sent }], 'SIGTERM').ledger;
  }

  const rows: Array<{
    name: string;
    seen?: ProcessInfo[];
    sent?: SendMoment | 'members';
    targets: Target[];
    alive: ProcessInfo[];
    signalled: ProcessInfo[];
  }> = [
    {
      name: 'forked before the look (seen, signalled with its group): not again',
      targets: [one(job)],
      alive: [job],
      signalled: [],
    },
    {
      name: 'forked between the look and the send (an earlier tick), its shell gone since: it had it',
      targets: [one(at(650, { start: 1990 }))],
      alive: [at(650, { start: 1990 })],
      signalled: [],
    },
    {
      name: 'forked after the send (a later tick), its shell gone: a root, sent the signal',
      targets: [one(at(720, { start: 2010 }))],
      alive: [at(720, { start: 2010 })],
      signalled: [at(720, { start: 2010 })],
    },
    {
      name: 'the same tick, its pid handed out before the send: it had it',
      targets: [one(at(690, { start: 2000 }))],
      alive: [at(690, { start: 2000 })],
      signalled: [],
    },
    {
      name: 'the same tick, its pid handed out after the send: sent the signal',
      targets: [one(at(710, { start: 2000 }))],
      alive: [at(710, { start: 2000 })],
      signalled: [at(710, { start: 2000 })],
    },
    {
      name: 'its pid handed out before the send, its start time a tick later (its fork preempted): it had it',
      targets: [one(at(690, { start: 2003 }))],
      alive: [at(690, { start: 2003 })],
      signalled: [],
    },
    {
      name: 'a pid below the counter but started over a second after the send (pids went round): sent the signal',
      targets: [one(at(690, { start: 2200 }))],
      alive: [at(690, { start: 2200 })],
      signalled: [at(690, { start: 2200 })],
    },
    {
      name: 'the same tick, pids wrapped since its pid was handed out (just before pid_max): it had it',
      sent: { ...moment, lastPid: 305 },
      targets: [one(at(32_700, { start: 2000 }))],
      alive: [at(32_700, { start: 2000 })],
      signalled: [],
    },
    {
      name: 'the same tick, its pid handed out after the wrap: sent the signal',
      sent: { ...moment, lastPid: 32_700 },
      targets: [one(at(310, { start: 2000 }))],
      alive: [at(310, { start: 2000 })],
      signalled: [at(310, { start: 2000 })],
    },
    {
      name: 'the same tick, no pid counter to tell: sent the signal (rather than miss it)',
      sent: { ...moment, lastPid: undefined },
      targets: [one(at(690, { start: 2000 }))],
      alive: [at(690, { start: 2000 })],
      signalled: [at(690, { start: 2000 })],
    },
    {
      name: 'forked between the look and the send, its parent alive (the group’s leader the same): it had it',
      targets: [group(sh, at(650, { ppid: 500, start: 1990 }))],
      alive: [sh, at(650, { ppid: 500, start: 1990 })],
      signalled: [],
    },
    {
      name: 'forked after the send, its parent alive: its parent’s (a cleanup helper), not sent the signal',
      targets: [group(sh, at(720, { ppid: 500, start: 2010 }))],
      alive: [sh, at(720, { ppid: 500, start: 2010 })],
      signalled: [],
    },
    {
      name: 'the group’s leader gone, the rest left as a whole group of unseen members: only those after the send',
      targets: [group(at(650, { start: 1990 }), at(720, { start: 2010 }))],
      alive: [at(650, { start: 1990 }), at(720, { start: 2010 })],
      signalled: [at(720, { start: 2010 })],
    },
    {
      name: 'the group’s id taken by a new leader (another start time): another group, every member sent the signal',
      targets: [group(at(500, { start: 5000 }), at(650, { start: 1990 }))],
      alive: [at(500, { start: 5000 }), at(650, { start: 1990 })],
      signalled: [at(500, { start: 5000 }), at(650, { start: 1990 })],
    },
    {
      name: 'a reused pid (a job’s pid, a later start time): a stranger, sent the signal',
      targets: [one(at(501, { start: 2500 }))],
      alive: [at(501, { start: 2500 })],
      signalled: [at(501, { start: 2500 })],
    },
    {
      name: 'moved into the group later with setpgid (seen outside it, in its session, at the look): sent the signal',
      seen: [sh, job, at(520, { pgid: 520, ppid: 500, start: 1700 })],
      targets: [one(at(520, { start: 1700 }))],
      alive: [at(520, { start: 1700 })],
      signalled: [at(520, { start: 1700 })],
    },
    {
      name: 'born after the look to a parent outside the group, then moved in: sent the signal',
      seen: [sh, job, at(520, { pgid: 520, ppid: 500, start: 1700 })],
      targets: [one(at(520, { pgid: 520, start: 1700 })), group(at(650, { ppid: 520, start: 1990 }))],
      alive: [at(520, { pgid: 520, start: 1700 }), at(650, { ppid: 520, start: 1990 })],
      signalled: [at(520, { pgid: 520, start: 1700 }), at(650, { ppid: 520, start: 1990 })],
    },
    {
      name: 'the group went to its members one by one (its leader gone at the send): nobody unseen had it',
      sent: 'members',
      targets: [one(at(650, { start: 1990 }))],
      alive: [at(650, { start: 1990 })],
      signalled: [at(650, { start: 1990 })],
    },
  ];

  it.each(rows)('$name', ({ seen = [sh, job], sent = moment, targets, alive, signalled }) => {
    const ledger = afterSend(seen, sent);
    const round = stopRound(ledger, route(targets), alive, undefined, false);
    expect(keys(round.fresh)).toEqual(signalled.map(processKey).sort());
    // Whoever had it (or is sent it now) is reached: a later round sends nobody anything.
    expect(stopRound(round.ledger, route(targets), alive, undefined, false).fresh).toEqual([]);
  });

  it('one who had it through its group gets a second stop signal with everyone reached', () => {
    const late = at(650, { start: 1990 });
    const round = stopRound(afterSend([sh, job]), route([one(late), one(job)]), [late, job], 'SIGINT', false);
    expect(round.fresh).toEqual([]);
    expect(keys(round.again!.targets)).toEqual(keys([one(late), one(job)]));
  });

  it('the machine: the round, its delivery’s word (round-sent), then a look that finds the unseen job', () => {
    const running: State = {
      phase: 'running',
      tally: initialState().tally,
      run: { id: 1, startedAt: 0, app: 'ready' },
    };
    let state = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' }, facts()).state;
    const rounds: Array<Extract<Effect, { kind: 'stop-round' }>> = [];
    const late = at(650, { start: 1990 });
    const inputs: Input[] = [
      looked([sh, job], 500, routeTo([group(sh, job)])),
      { kind: 'round-sent', groups: [{ pgid: 500, moment }] },
      looked([job, late], 500, routeTo([one(job), one(late)])),
      looked([late], 500, routeTo([one(late)])),
    ];
    for (const input of inputs) {
      const next = step(state, input, facts());
      for (const effect of next.effects) if (effect.kind === 'stop-round') rounds.push(effect);
      state = next.state;
    }
    expect(rounds.map((round) => keys(round.targets))).toEqual([keys([group(sh, job)]), [], []]);
    // Without the delivery's word the group counts as sent member by member: the unseen job is sent it.
    let without = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'x' }, facts()).state;
    without = step(without, inputs[0], facts()).state;
    without = step(without, { kind: 'round-sent', groups: [] }, facts()).state;
    const effects = step(without, inputs[2], facts()).effects;
    expect(effects.flatMap((effect) => (effect.kind === 'stop-round' ? keys(effect.targets) : []))).toEqual([
      processKey(late),
    ]);
  });
});

describe('relayers (tsx): left out while a child of theirs has the stop signal, sent it once the child is gone', () => {
  const node = (pid: number, ppid: number, pgid = 9): ProcessInfo => ({
    pid,
    ppid,
    pgid,
    sid: 9,
    state: 'S',
    startTime: pid,
    name: 'node',
  });
  const npm = node(9, 1);
  const tsx = node(10, 9);
  const app = node(11, 10);
  const relaying = (targets: Target[], relayers: ProcessInfo[]) => ({
    ...route(targets),
    relayers: new Set(relayers.map(processKey)),
  });

  it('npm → tsx → app in one group: the group member by member, tsx left out (said once); tsx once its app is gone', () => {
    const first = stopRound(EMPTY_LEDGER, relaying([group(npm, tsx, app)], [tsx]), [npm, tsx, app], undefined, false);
    expect(keys(first.fresh)).toEqual(keys([one(npm), one(app)]));
    expect(first.fresh.every((target) => target.kind === 'process')).toBe(true);
    expect(first.held).toEqual([tsx]);
    // Its app cleaning up: nothing, and tsx is not said again.
    const second = stopRound(first.ledger, relaying([group(npm, tsx, app)], [tsx]), [npm, tsx, app], undefined, false);
    expect(second.fresh).toEqual([]);
    expect(second.held).toEqual([]);
    // The app is gone; `tsx watch` stays: now it gets the signal (npm alive, but tsx was there all along).
    const third = stopRound(second.ledger, relaying([group(npm, tsx)], [tsx]), [npm, tsx], undefined, false);
    expect(keys(third.fresh)).toEqual(keys([one(tsx)]));
    expect(stopRound(third.ledger, relaying([group(npm, tsx)], [tsx]), [npm, tsx], undefined, false).fresh).toEqual([]);
  });

  it('a relayer whose child gets nothing from gsup (not a root, not reached): the relayer gets it, and relays', () => {
    const child = node(11, 10, 11); // a group of its own whose parent lives: tsx's to signal
    const round = stopRound(EMPTY_LEDGER, relaying([group(npm, tsx)], [tsx]), [npm, tsx, child], undefined, false);
    expect(keys(round.fresh)).toEqual(keys([group(npm, tsx)]));
    expect(round.held).toEqual([]);
  });

  it('tsx → tsx → app: both left out (the outer one would relay to the inner); alone, a relayer gets it', () => {
    const inner = node(11, 10);
    const deep = node(12, 11);
    const all = [npm, tsx, inner, deep];
    const round = stopRound(EMPTY_LEDGER, relaying([group(...all)], [tsx, inner]), all, undefined, false);
    expect(keys(round.fresh)).toEqual(keys([one(npm), one(deep)]));
    expect(round.held).toEqual([tsx, inner]);
    const alone = stopRound(EMPTY_LEDGER, relaying([one(tsx)], [tsx]), [tsx], undefined, false);
    expect(keys(alone.fresh)).toEqual(keys([one(tsx)]));
  });

  it('a second stop signal goes to everyone reached: a relayer left out is not among them', () => {
    const first = stopRound(EMPTY_LEDGER, relaying([group(npm, tsx, app)], [tsx]), [npm, tsx, app], undefined, false);
    const again = stopRound(first.ledger, relaying([group(npm, tsx, app)], [tsx]), [npm, tsx, app], 'SIGINT', false);
    expect(keys(again.again!.targets)).toEqual(keys([one(npm), one(app)]));
  });
});

describe('stopped processes: SIGCONT after the stop signal, once each', () => {
  it('a stopped (T) or traced (t) process of the look gets SIGCONT in the round, and never again', () => {
    const stopped = { ...proc(500), state: 'T' };
    const traced = { ...proc(501, 500, 500), state: 't' };
    const running = proc(502, 500, 500);
    const alive = [stopped, traced, running];
    const first = stopRound(EMPTY_LEDGER, route([group(...alive)]), alive, undefined, false);
    expect(keys(first.fresh)).toEqual(keys([group(...alive)]));
    expect(first.cont).toEqual([stopped, traced]);
    expect(stopRound(first.ledger, route([group(...alive)]), alive, undefined, false).cont).toEqual([]);
    // Stopped after the round's look: the next round continues it.
    const later = { ...running, state: 'T' };
    const next = stopRound(first.ledger, route([]), [stopped, traced, later], undefined, false);
    expect(next.cont).toEqual([later]);
  });

  it('the machine: the stop round’s effect carries them, after its targets', () => {
    const running: State = {
      phase: 'running',
      tally: initialState().tally,
      run: { id: 1, startedAt: 0, app: 'ready' },
    };
    const stopping = step(running, { kind: 'stop-signal', signal: 'SIGTERM', reason: 'x' }, facts()).state;
    const stopped = { ...proc(500), state: 'T' };
    const { effects } = step(stopping, looked([stopped], 500, routeTo([one(stopped)])), facts());
    const round = effects.find((effect) => effect.kind === 'stop-round');
    expect(round).toMatchObject({ targets: [one(stopped)], cont: [stopped] });
  });
});

describe('a relayer is signalled alone, and a child it starts during the stop is its own to relay to', () => {
  // `gsup -- tsx watch app.ts`: tsx (10) leads the command's group; its app (11) in it.
  const node = (pid: number, ppid: number): ProcessInfo => ({
    pid,
    ppid,
    pgid: 10,
    sid: 10,
    state: 'S',
    startTime: pid,
    name: 'node',
  });
  const tsx = node(10, 1);
  const app = node(11, 10);
  const restarted = node(12, 10); // tsx watch restarted its app during the stop (a file changed)
  const relaying = (targets: Target[]) => ({ ...route(targets), relayers: new Set([processKey(tsx)]) });
  const first = stopRound(EMPTY_LEDGER, relaying([group(tsx, app)]), [tsx, app], undefined, false);

  it('the first round: the app alone (a process, not its group), tsx left out', () => {
    expect(first.fresh).toEqual([one(app)]);
    expect(first.held).toEqual([tsx]);
  });

  it('its app gone: tsx alone, as a process (a send to its group would reach a child forked since the look)', () => {
    const round = stopRound(first.ledger, relaying([group(tsx)]), [tsx], undefined, false);
    expect(round.fresh).toEqual([one(tsx)]);
  });

  it('a child it started since: tsx gets the signal (it relays, and starts no other), the child nothing from gsup', () => {
    const alive = [tsx, restarted];
    const round = stopRound(first.ledger, relaying([group(tsx, restarted)]), alive, undefined, false);
    expect(round.fresh).toEqual([one(tsx)]);
    expect(round.held).toEqual([]);
    // Nothing more, whoever is still there.
    expect(stopRound(round.ledger, relaying([group(tsx, restarted)]), alive, undefined, false).fresh).toEqual([]);
  });

  it('with the old app still cleaning up beside the new one: tsx waits for the old app, then gets it alone', () => {
    const alive = [tsx, app, restarted];
    const round = stopRound(first.ledger, relaying([group(tsx, app, restarted)]), alive, undefined, false);
    expect(round.fresh).toEqual([]); // the new child is tsx's to relay to; tsx, its old app's
    const after = stopRound(round.ledger, relaying([group(tsx, restarted)]), [tsx, restarted], undefined, false);
    expect(after.fresh).toEqual([one(tsx)]);
  });
});

describe('SIGCONT only to who has had the stop signal, after it', () => {
  const stopped = (info: ProcessInfo): ProcessInfo => ({ ...info, state: 'T' });
  const parent = proc(500);
  // A worker in a group of its own whose parent lives: the parent's to stop (not a root, not reached).
  const worker = stopped(proc(510, 510, 500));

  it('a stopped worker whose parent lives and owns its group: no SIGCONT (nothing told it to stop)', () => {
    const round = stopRound(EMPTY_LEDGER, route([one(parent)]), [parent, worker], undefined, false);
    expect(round.cont).toEqual([]);
    // Its parent gone, it is a root: sent the stop signal, then SIGCONT.
    const alone = stopRound(round.ledger, route([group(worker)]), [worker], undefined, false);
    expect(keys(alone.fresh)).toEqual(keys([group(worker)]));
    expect(alone.cont).toEqual([worker]);
  });

  it('a stopped member of a group sent as a group: SIGCONT, once', () => {
    const member = stopped(proc(501, 500, 500));
    const round = stopRound(EMPTY_LEDGER, route([group(parent, member)]), [parent, member], undefined, false);
    expect(round.fresh).toEqual([group(parent, member)]);
    expect(round.cont).toEqual([member]);
  });

  it('a stopped relayer left out: no SIGCONT until it is sent the signal itself', () => {
    const tsx = stopped({ ...proc(10, 9, 9), name: 'node' });
    const app = { ...proc(11, 9, 10), name: 'node' };
    const relaying = (targets: Target[]) => ({ ...route(targets), relayers: new Set([processKey(tsx)]) });
    const first = stopRound(EMPTY_LEDGER, relaying([group(tsx, app)]), [tsx, app], undefined, false);
    expect(first.held).toEqual([tsx]);
    expect(first.cont).toEqual([]);
    const after = stopRound(first.ledger, relaying([group(tsx)]), [tsx], undefined, false);
    expect(after.fresh).toEqual([one(tsx)]);
    expect(after.cont).toEqual([tsx]);
  });

  it('pm2: what a God daemon stopped through pm2 runs gets SIGCONT only once pm2 has been told (pm2Cont)', () => {
    const god = stopped(proc(700));
    const app = stopped(proc(701, 701, 700));
    const pm2 = { kill: [daemon(god)], managed: [700, 701] };
    const round = stopRound(EMPTY_LEDGER, route([], pm2), [god, app], undefined, true);
    expect(round.cont).toEqual([]);
    expect(round.pm2Cont).toEqual([god, app]);
    // Never again.
    const next = stopRound(round.ledger, route([], pm2), [god, app], undefined, true);
    expect([...next.cont, ...next.pm2Cont]).toEqual([]);
    // While gsup's own pm2 stop waits for a command that runs on (its trap stops pm2): nothing, not even SIGCONT.
    const waiting = stopRound(EMPTY_LEDGER, route([], { ...pm2, commandPid: 500 }), [god, app], undefined, false);
    expect([...waiting.cont, ...waiting.pm2Cont]).toEqual([]);
  });
});
