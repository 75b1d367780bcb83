import type { Logger } from '../../log.js';
import type { Platform } from '../../platform/index.js';
import type { SuperviseOptions } from '../config/api.js';
import type { SupervisorConfig } from '../config/config.js';
import type { CommandRun } from '../children/run.js';
import type { CommandExit } from '../children/spawn.js';
import type { HealthSchedule } from '../health/schedule.js';
import type { Input, State } from '../machine/step.js';
import type { Pm2Manager } from '../pm2/daemons.js';
import type { SignalIntake } from './intake.js';
import type { LostChildWatch } from './lost-child.js';
import type { EventQueue } from './queue.js';
import type { Timers } from './timers.js';
import type { Parts } from './wiring.js';

/**
 * A handler for each kind of a union, typed by kind: a kind without one (or
 * one for a kind that does not exist) does not compile. The shell's effects
 * (effects.ts) and events (events.ts) are carried out through such tables.
 */
export type Table<T extends { kind: string }, R> = { [K in T['kind']]: (value: Extract<T, { kind: K }>) => R };

/** The handler of this value's kind, called with it. */
export function dispatch<T extends { kind: string }, R>(table: Table<T, R>, value: T): R {
  return (table[value.kind as T['kind']] as (value: T) => R)(value);
}

/** What the effect table and the event dispatch see of the supervisor (supervisor.ts). */
export interface Shell {
  readonly command: string;
  readonly config: SupervisorConfig;
  readonly options: SuperviseOptions;
  readonly platform: Platform;
  readonly logger: Logger;
  /** What acts on the world: the tree and its looks, gsup's children, forwards, stop rounds, pm2, probes. */
  readonly parts: Parts;
  readonly timers: Timers;
  readonly health: HealthSchedule | undefined;
  readonly intake: SignalIntake;
  readonly lostChild: LostChildWatch;
  readonly queue: EventQueue;
  /** The machine's state, to ask things of (machine/queries.ts), never to decide on. */
  readonly state: State;
  readonly run: CommandRun;
  /** The pm2 managers the last look found. */
  managers: Pm2Manager[];
  /** gsup's own process group: never a target. */
  ownPgid: number;
  /** Runs the machine on an input, and on what its effects bring back, in order. */
  apply(input: Input): void;
  /** Starts run `id` of the command. */
  startRun(id: number): void;
  /** The supervision is over: gsup exits with `exitCode`. */
  end(exitCode: number, exit: CommandExit): void;
}
