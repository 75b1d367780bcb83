import { initialState, step, type Effect, type Input, type State } from '../../src/engine/machine/step.js';
import type { MachineConfig } from '../../src/engine/machine/step.js';
import type { Target } from '../../src/engine/machine/ledger/ledger.js';
import type { ProcessInfo } from '../../src/platform/index.js';
import type { Snapshot } from '../../src/engine/machine/values.js';
import { factsWith, lookOf, routeTo } from './machine.js';

// Reloads in the pure step's table tests: two runs at once (run N's command pid N*100+400 leading its group, its
// app the next pid), the inputs of a reload, and states along one.

export const facts = factsWith({ waitReady: true });
export const kinds = (effects: Effect[]) => effects.map((effect) => effect.kind);
export const logged = (effects: Effect[]) =>
  effects.flatMap((effect) => (effect.kind === 'log' ? [`${effect.level} ${effect.message}`] : []));
export const timers = (effects: Effect[]) =>
  effects.flatMap((effect) =>
    effect.kind === 'set-timer' || effect.kind === 'clear-timer' ? [`${effect.kind} ${effect.name}`] : [],
  );

/** Run N's command (pid N*100+400: 500, 600, 700…) leads its group; its app is the next pid, in that group. */
export const command = (run: number): ProcessInfo => proc(run * 100 + 400, 1);
export const app = (run: number): ProcessInfo => proc(run * 100 + 401, run * 100 + 400);
export function proc(pid: number, ppid: number): ProcessInfo {
  const pgid = ppid === 1 ? pid : ppid;
  return { pid, ppid, pgid, sid: pgid, state: 'S', startTime: pid, name: `p${pid}` };
}
export const group = (run: number): Target => ({
  kind: 'group',
  pgid: command(run).pid,
  members: [command(run), app(run)],
});

/** A look at runs' trees, with each member's run (as the tree says it while two runs live). */
export function lookAt(...runs: number[]): Snapshot {
  const alive = runs.flatMap((run) => [command(run), app(run)]);
  return { ...lookOf(alive), runs: new Map(alive.map((info) => [info.pid, Math.floor((info.pid - 400) / 100)])) };
}
/** The `looked` input: the stop's route over the whole look, the retiring run's over its part (as the shell plans). */
export function looked(
  runs: number[],
  stopRoute?: number[],
  retireRoute?: number[],
): Extract<Input, { kind: 'looked' }> {
  const route = stopRoute && routeTo(stopRoute.map(group));
  const retire = retireRoute && routeTo(retireRoute.map(group));
  return { kind: 'looked', snapshot: lookAt(...runs), commandPgid: 500, route, retireRoute: retire };
}
export const exited = (run: number, code = 0): Extract<Input, { kind: 'command-exit' }> => ({
  kind: 'command-exit',
  run,
  exit: { code, signal: null },
  sent: new Set(),
  treeGone: false,
  mayHaveDaemon: false,
  wrapper: false,
});
export const said = (run: number): Input => ({ kind: 'app-said', run, word: 'ready', via: 'READY=1 on NOTIFY_SOCKET' });
export const reload: Input = { kind: 'reload', reason: 'SIGHUP received' };
export const stopSignal: Extract<Input, { kind: 'stop-signal' }> = {
  kind: 'stop-signal',
  signal: 'SIGTERM',
  reason: 'SIGTERM received',
};
export const timer = (name: 'next-ready-timeout' | 'retire-kill-timeout' | 'restart-delay'): Input => ({
  kind: 'timer',
  name,
});

/** Feeds inputs in order; returns the last state and every effect. */
export function feed(state: State, inputs: Input[], overrides: Partial<MachineConfig> = {}, now = 100_000) {
  const effects: Effect[] = [];
  for (const input of inputs) {
    const next = step(state, input, facts(overrides, now));
    effects.push(...next.effects);
    state = next.state;
  }
  return { state, effects };
}

/** Run 1 serving (it said ready), then the reload signal: run 2 starting beside it. */
export function reloading(overrides: Partial<MachineConfig> = {}) {
  const started = feed(initialState(), [{ kind: 'start', stopFirst: undefined }, said(1)], overrides);
  return feed(started.state, [reload], overrides);
}
/** Run 2 ready: run 1 retiring, its first round sent. */
export function retiring() {
  return feed(reloading().state, [said(2), looked([1, 2], undefined, [1])]);
}
/** Everyone sent a stop signal by these effects' rounds, by process key and signal (repeats kept). */
export function sent(effects: Effect[]): string[] {
  return effects.flatMap((effect) => {
    if (effect.kind !== 'stop-round') return [];
    const to = (targets: Target[], signal: string) =>
      targets.flatMap((target) =>
        (target.kind === 'group' ? target.members : [target.process]).map((info) => `${signal} ${info.pid}`),
      );
    return [
      ...to(effect.targets, effect.signal),
      ...(effect.again ? to(effect.again.targets, effect.again.signal) : []),
    ];
  });
}
