import type { Effect } from '../machine/step.js';
import type { Shell, Table } from './tables.js';

/**
 * What each effect of the step does in the world, one entry per kind: an
 * effect nobody carries out does not compile. Each carries what it acts on
 * (a stop round its look); the shell holds nothing for the effect to come.
 */
export function effectTable(shell: Shell): Table<Effect, void> {
  const { parts, timers, logger, options } = shell;
  const health = (effect: Extract<Effect, { kind: 'pause-health' | 'probe' | 'schedule-probe' }>) =>
    shell.health?.carryOut(effect);
  return {
    spawn: (effect) => shell.startRun(effect.run),
    look: (effect) => parts.scans.request(effect.delayMs),
    'set-timer': (effect) => timers.set(effect.name, effect.ms),
    'ensure-timer': (effect) => timers.ensure(effect.name, effect.ms),
    'clear-timer': (effect) => timers.clear(effect.name),
    log: (effect) => logger.log(effect.level, effect.event, effect.message, effect.fields),
    'pause-health': health,
    probe: health,
    'schedule-probe': health,
    'begin-stop': () => parts.stops.begin(Date.now()),
    'count-seen': (effect) => parts.stops.saw(effect.look),
    'stop-round': (effect) => {
      for (const signal of parts.stops.round(effect, shell.run)) options.status?.countForward(signal);
    },
    'kill-command-group': () => parts.stops.killCommandGroup(shell.run, parts.scans.latest),
    'kill-round': (effect) => parts.stops.killRound(effect.look, shell.ownPgid),
    'give-up-killing': (effect) => parts.stops.giveUp(effect.alive),
    'end-stop': () => {
      const took = parts.stops.end(Date.now()); // outside `?.(…)`: it runs with no board too
      options.status?.stopTook(took);
    },
    sweep: () => {
      const { reaped, notYet } = parts.children.sweep();
      shell.apply({ kind: 'reaped', exits: reaped });
      shell.apply({ kind: 'swept', notYet });
    },
    exit: (effect) => shell.end(effect.exitCode, effect.exit),
  };
}
