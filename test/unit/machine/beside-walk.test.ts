import { describe, expect, it } from 'vitest';
import {
  initialState,
  step,
  type Effect,
  type Input,
  type MachineConfig,
  type State,
} from '../../../src/engine/machine/step.js';
import { besideEnds } from '../../../src/engine/machine/queries.js';
import { retireRoundSignal } from '../../../src/engine/machine/runs/retire.js';
import { stopRoundSignal } from '../../../src/engine/machine/stop/stop-sequence.js';
import type { TimerName } from '../../../src/engine/machine/state.js';
import type { Target } from '../../../src/engine/machine/ledger/ledger.js';
import type { ProcessInfo } from '../../../src/platform/index.js';
import { lookOf, routeTo } from '../../helpers/machine.js';
import { facts } from '../../helpers/reload.js';

// The machine walked at random through reloads, crashes, restarts, stops and timeouts, against a small world that
// answers its effects as the shell would (timers fire only once set, looks only once asked for, a command's exit
// is reported once it is dead). After every step a run beside the current one has a way to its end that is due
// (besideEnds: its timer set, a look asked for, its command's exit still to come, a stop under way); and once the
// world goes quiet (no more signals, only timers, looks and exits), no run is beside.

/** A small deterministic generator (mulberry32): each walk is the same on every machine. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Proc {
  info: ProcessInfo;
  run: number;
  /** Leaves on SIGTERM/SIGINT (else only SIGKILL ends it). */
  stops: boolean;
}

/** The world as the shell sees it: processes by pid, timers, a look asked for, exits libuv has still to report. */
class World {
  state: State = initialState();
  now = 100_000;
  readonly procs = new Map<number, Proc>();
  readonly timers = new Map<TimerName, number>();
  /** When the look asked for is due (undefined: none asked for). */
  look: number | undefined;
  /** Runs whose command died and whose exit is not reported yet. */
  readonly exits: number[] = [];
  readonly reported = new Set<number>();
  readonly queue: Input[] = [];
  steps = 0;

  constructor(
    readonly config: Partial<MachineConfig>,
    private readonly rnd: () => number,
    /** Looks tell runs apart (the tree's attribution); false: some looks do not. */
    private readonly parts: boolean,
  ) {}

  apply(input: Input): void {
    this.queue.push(input);
    while (this.queue.length > 0) {
      const { state, effects } = step(this.state, this.queue.shift()!, facts(this.config, this.now));
      this.state = state;
      for (const effect of effects) this.effect(effect);
      this.steps++;
    }
    this.check();
  }

  private effect(effect: Effect): void {
    switch (effect.kind) {
      case 'spawn':
      case 'spawn-next': {
        const pid = effect.run * 100 + 400;
        const stops = this.rnd() < 0.7;
        this.add({ pid, ppid: 1, pgid: pid, sid: pid }, effect.run, stops);
        this.add({ pid: pid + 1, ppid: pid, pgid: pid, sid: pid }, effect.run, stops && this.rnd() < 0.8);
        // Under --listen its app takes the held socket, and says so.
        if (this.config.listen)
          this.queue.push({ kind: 'socket-taken', run: effect.run, name: 'web', pid: pid + 1, seen: 'word' });
        return;
      }
      case 'tell': {
        // The app answers with its connections, none or some (or says nothing: the drain limit ends it).
        const pid = effect.run * 100 + 401;
        const roll = this.rnd();
        if (this.procs.has(pid) && roll < 0.7)
          this.queue.push({ kind: 'conns', run: effect.run, pid, count: roll < 0.4 ? 0 : 2 });
        return;
      }
      case 'set-timer':
        return void this.timers.set(effect.name, this.now + effect.ms);
      case 'ensure-timer':
        if (!this.timers.has(effect.name)) this.timers.set(effect.name, this.now + effect.ms);
        return;
      case 'clear-timer':
        return void this.timers.delete(effect.name);
      case 'look':
        return void (this.look = Math.min(this.look ?? Infinity, this.now + effect.delayMs));
      case 'stop-round':
        for (const target of [...effect.targets, ...(effect.again?.targets ?? [])])
          for (const info of target.kind === 'group' ? target.members : [target.process])
            if (this.procs.get(info.pid)?.stops) this.kill(info.pid);
        return;
      case 'kill-command-group':
        for (const [pid, proc] of this.procs) if (proc.info.pgid === effect.run * 100 + 400) this.kill(pid);
        return;
      case 'kill-round':
        for (const info of effect.snapshot.alive) this.kill(info.pid);
        return;
      case 'check-sockets':
        return void this.queue.push({ kind: 'sockets-checked', run: effect.run, lost: [] });
      case 'sweep':
        return void this.queue.push({ kind: 'swept', notYet: 0 });
      default:
        return;
    }
  }

  private add(info: Omit<ProcessInfo, 'state' | 'startTime' | 'name'>, run: number, stops: boolean): void {
    this.procs.set(info.pid, { info: { ...info, state: 'S', startTime: info.pid, name: `p${info.pid}` }, run, stops });
  }

  kill(pid: number): void {
    const proc = this.procs.get(pid);
    if (!proc) return;
    this.procs.delete(pid);
    if (proc.info.ppid === 1) this.exits.push(proc.run);
  }

  /** gsup has no child left: nothing alive, no exit unreported (a zombie is still a child). */
  get treeGone(): boolean {
    return this.procs.size === 0 && this.exits.length === 0;
  }

  reportExit(): void {
    const run = this.exits.shift()!;
    this.reported.add(run);
    const input: Input = {
      kind: 'command-exit',
      run,
      exit: { code: this.rnd() < 0.5 ? 0 : 1, signal: null },
      ...{ sent: new Set(), treeGone: this.treeGone, mayHaveDaemon: false, wrapper: false },
    };
    this.apply(input);
  }

  takeLook(): void {
    this.now = Math.max(this.now, this.look ?? this.now);
    this.look = undefined;
    const alive = [...this.procs.values()].map((proc) => proc.info);
    const told = this.parts || this.rnd() < 0.5;
    const runs = told ? new Map([...this.procs.values()].map((proc) => [proc.info.pid, proc.run])) : undefined;
    const routeOf = (run?: number) => {
      const pgids = new Set(
        alive.filter((info) => run === undefined || runs?.get(info.pid) === run).map((i) => i.pgid),
      );
      const targets: Target[] = [...pgids].map((pgid) => ({
        kind: 'group',
        pgid,
        members: alive.filter((info) => info.pgid === pgid),
      }));
      return routeTo(targets);
    };
    const stopping = stopRoundSignal(this.state) !== undefined;
    const retire = retireRoundSignal(this.state);
    this.apply({
      kind: 'looked',
      snapshot: { ...lookOf(alive), ...(runs && { runs }) },
      commandPgid: undefined,
      route: stopping ? routeOf() : undefined,
      ...(retire && runs && { retireRoute: routeOf(retire.run) }),
    });
  }

  fireTimer(): boolean {
    const next = [...this.timers].sort((a, b) => a[1] - b[1])[0];
    if (!next) return false;
    this.timers.delete(next[0]);
    this.now = Math.max(this.now, next[1]);
    this.apply({ kind: 'timer', name: next[0] });
    return true;
  }

  /** A run beside the current one has a way to its end that is due. */
  private check(): void {
    const end = besideEnds(this.state);
    if (end === undefined) return;
    const beside = this.state.tally.beside!;
    const why = `${end} for run ${beside.run.id} (${beside.role}) in ${this.state.phase}`;
    expect(end, why).not.toBe('stuck');
    if (end === 'next-ready-timeout' || end === 'retire-kill-timeout' || end === 'drain-limit')
      expect(this.timers.has(end), why).toBe(true);
    if (end === 'looks') expect(this.look, why).toBeDefined();
    if (end === 'exit') expect(this.reported.has(beside.run.id), why).toBe(false);
  }
}

/** One walk: `moves` random inputs, then only timers, looks and exits until the world is quiet. */
function walk(seed: number, config: Partial<MachineConfig>, parts: boolean): World {
  const rnd = random(seed);
  const world = new World(config, rnd, parts);
  world.apply({ kind: 'start', stopFirst: undefined });
  const alive = () => [...world.procs.keys()];
  for (let move = 0; move < 60 && world.state.phase !== 'done'; move++) {
    const roll = rnd();
    const run = 'run' in world.state ? world.state.run.id : 1;
    if (roll < 0.12) world.apply({ kind: 'reload', reason: 'SIGHUP received' });
    else if (roll < 0.14) world.apply({ kind: 'stop-signal', signal: 'SIGTERM', reason: 'SIGTERM received' });
    else if (roll < 0.3) {
      const beside = world.state.tally.beside?.run.id;
      world.apply({ kind: 'app-said', run: rnd() < 0.6 && beside ? beside : run, word: 'ready', via: 'test' });
    } else if (roll < 0.4 && alive().length > 0) world.kill(alive()[Math.floor(rnd() * alive().length)]);
    else if (roll < 0.55 && world.exits.length > 0) world.reportExit();
    else if (roll < 0.6) world.apply({ kind: 'child-gone', treeGone: world.treeGone });
    else if (roll < 0.8 && world.look !== undefined) world.takeLook();
    else world.fireTimer();
  }
  // Quiet: the world answers what the machine asked for, and nothing more.
  for (let turn = 0; turn < 5000 && world.state.phase !== 'done'; turn++) {
    const timer = Math.min(...world.timers.values());
    if (world.exits.length > 0) world.reportExit();
    else if (world.look !== undefined && world.look <= timer) world.takeLook();
    else if (!world.fireTimer()) break;
    if (!world.state.tally.beside && world.look === undefined && world.exits.length === 0) break;
  }
  return world;
}

describe('a run beside the current one always has a way to its end', () => {
  const configs: Array<[string, Partial<MachineConfig>]> = [
    ['--restart always', { restart: 'always', restartDelay: 1, killTimeout: 2000 }],
    ['--restart on-failure, --ready-timeout', { restart: 'on-failure', readyTimeout: 3000, killTimeout: 1000 }],
    ['--restart never, a stop delay', { stopDelay: 500, killTimeout: 1500 }],
    [
      '--listen with the preload: old runs drain first',
      { listen: { names: ['web'], preload: true }, reloadDrain: 800, killTimeout: 1500, stopDelay: 300 },
    ],
  ];
  for (const [name, config] of configs)
    for (const parts of [true, false])
      it(`${name}, ${parts ? 'every look tells runs apart' : 'some looks tell no run apart'}: 300 walks`, () => {
        for (let seed = 1; seed <= 300; seed++) {
          const world = walk(seed * 7919 + (parts ? 0 : 1), config, parts);
          const where = `seed ${seed}: ${world.state.phase}, ${world.steps} steps`;
          if (world.state.phase !== 'done') expect(world.state.tally.beside, where).toBeUndefined();
        }
      });
});
