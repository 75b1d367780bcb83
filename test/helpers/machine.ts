import type { Facts, MachineConfig } from '../../src/engine/machine/step.js';
import { signalNumber } from '../../src/signals.js';

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
};

/** What `step` is told besides the input: the time and the configuration (with `base` under `overrides`). */
export function factsWith(base: Partial<MachineConfig> = {}) {
  return (overrides: Partial<MachineConfig> = {}, now = 100_000): Facts => ({
    now,
    config: { ...machineConfig, ...base, ...overrides },
    signalNumber,
  });
}
