import type { Facts, Input, MachineConfig, Route } from '../../src/engine/machine/step.js';
import type { Target } from '../../src/engine/machine/ledger/ledger.js';
import type { ProcessInfo } from '../../src/platform/index.js';
import { signalNumber } from '../../src/platform/signals.js';
import { reloadableSignals } from '../../src/engine/config/reload-signal.js';
import type { Snapshot } from '../../src/engine/machine/values.js';

/** The machine's configuration in the table tests: the defaults, then what a test sets. */
export const machineConfig: MachineConfig = {
  killTimeout: 10_000,
  stopDelay: 0,
  onExit: 'auto',
  successExit: [],
  restart: 'never',
  maxRestarts: 10,
  restartDelay: 1000,
  probes: false,
  waitReady: false,
  readyTimeout: undefined,
  retireSignal: 'SIGTERM',
  reload: { signal: undefined, candidates: reloadableSignals(new Map()) },
  reloadDrain: 6000,
};

/** What `step` is told besides the input: the time and the configuration (with `base` under `overrides`). */
export function factsWith(base: Partial<MachineConfig> = {}) {
  return (overrides: Partial<MachineConfig> = {}, now = 100_000): Facts => ({
    now,
    config: { ...machineConfig, ...base, ...overrides },
    signalNumber,
  });
}

/** A look at the tree that found these processes alive (in groups of their own making). */
export function lookOf(alive: ProcessInfo[]): Snapshot {
  const groups = new Map<number, ProcessInfo[]>();
  const children = new Map<number, ProcessInfo[]>();
  for (const info of alive) {
    groups.set(info.pgid, [...(groups.get(info.pgid) ?? []), info]);
    children.set(info.ppid, [...(children.get(info.ppid) ?? []), info]);
  }
  return { members: alive, alive, groups, children, joined: [], left: [], leftCommands: [] };
}

/** The `looked` input: a look that found `alive`; `route`, where a stop round goes (the shell plans it while stopping). */
export function looked(alive: ProcessInfo[], commandPgid: number | undefined, route?: Route): Input {
  return { kind: 'looked', snapshot: lookOf(alive), commandPgid, route };
}

/** A route for a stop round: these targets, no pm2 (the shell's plan, forwarder.plan); `relayers` by processKey. */
export function routeTo(targets: Target[], commandPid?: number, relayers: ReadonlySet<string> = new Set()): Route {
  return { targets, pm2Kill: [], managed: new Set(), runs: new Map(), commandPid, relayers };
}
