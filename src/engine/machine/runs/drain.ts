import { formatDuration } from '../format.js';
import { NOTHING, runOf, withRun } from '../held/held.js';
import { log } from '../outcomes/outcomes.js';
import { endDrain, retiringOf } from './retire.js';
import type { Facts, HeldInput, Out, Run, State, TellWord, Told } from '../state.js';
import type { Snapshot } from '../values.js';

// gsup's words to a run's preload (--listen): a reload's old run drains before its stop signal (its preload stops
// accepting in its own processes, answers with `Connection: close`, says its connections as they go), and the
// final stop's delay answers with `Connection: close`. The stop signal of a draining run goes once every process
// that took a held socket holds no connection, or at the drain limit (--reload-drain).

/** The processes of a run that took a held socket by their word (their preload reads gsup's words). */
function wordTakers(run: Run): number[] {
  const pids = (run.held?.takers ?? []).filter((taker) => taker.seen === 'word').map((taker) => taker.pid);
  return [...new Set(pids)];
}

/**
 * Tells `word` to a run's preload: the run, told, or undefined when no process of it took a held socket by its word
 * (an app without the preload: nothing to tell, nothing to wait for).
 */
export function tell(run: Run, word: TellWord, facts: Facts, out: Out): Run | undefined {
  if (!facts.config.listen?.preload) return undefined;
  const pids = wordTakers(run);
  if (pids.length === 0) return undefined;
  out.push({ kind: 'tell', run: run.id, word });
  const told: Told = { word, since: facts.now, pids, sent: 1, conns: new Map() };
  return { ...run, held: { ...(run.held ?? NOTHING), told } };
}

const total = (told: Told) => [...told.conns.values()].reduce((sum, count) => sum + count, 0);
const left = (told: Told) => told.pids.filter((pid) => (told.conns.get(pid) ?? 1) > 0);

/** What the processes of a run said (or were found gone: none held), and the next word when one answered. */
function heardOf(state: State, id: number, said: ReadonlyMap<number, number>, facts: Facts, out: Out): State {
  const run = runOf(state, id);
  const told = run?.held?.told;
  if (!run || !told) return state;
  const conns = new Map(told.conns);
  let answered = false;
  for (const [pid, count] of said) {
    if (!told.pids.includes(pid)) continue;
    answered ||= !conns.has(pid);
    conns.set(pid, count);
  }
  let { sent } = told;
  // One word per process (each reads one, then no more): the next goes out once one is answered.
  if (answered && sent < told.pids.length && told.pids.some((pid) => !conns.has(pid))) {
    out.push({ kind: 'tell', run: id, word: told.word });
    sent++;
  }
  const next: Told = { ...told, conns, sent };
  // While it drains (its end says itself; after the drain limit, its counts are the stop's to see).
  const draining = retiringOf(state.tally)?.run.id === id && retiringOf(state.tally)?.draining;
  if (told.word === 'drain' && draining && left(next).length > 0) {
    const message = `run ${id} drains: ${total(next)} connection(s) open (${left(next).length} process(es) hold some)`;
    log(out, answered ? 'info' : 'debug', 'drain-conns', message, { run: id, conns: total(next) });
  }
  return drainedYet(withRun(state, id, { ...run.held!, told: next }), facts, out);
}

/** A process of a run, told a word, said how many connections it holds. */
export function connsHeard(state: State, input: Extract<HeldInput, { kind: 'conns' }>, facts: Facts, out: Out) {
  return heardOf(state, input.run, new Map([[input.pid, input.count]]), facts, out);
}

/** Every holder of a run's report channel is gone, or a look found some gone: they hold no connection. */
export function drainGone(state: State, input: HeldInput | Snapshot, facts: Facts, out: Out): State {
  const retiring = retiringOf(state.tally);
  const told = retiring?.draining ? retiring.run.held?.told : undefined;
  if (!retiring || !told) return state;
  const all = 'kind' in input;
  if (all && (input.kind !== 'report-closed' || input.run !== retiring.run.id)) return state;
  const gone = told.pids.filter((pid) => all || !input.alive.some((info) => info.pid === pid));
  if (gone.length === 0) return state;
  return heardOf(state, retiring.run.id, new Map(gone.map((pid) => [pid, 0])), facts, out);
}

/** The draining run holds no connection: its stop signal now. */
function drainedYet(state: State, facts: Facts, out: Out): State {
  const retiring = retiringOf(state.tally);
  const told = retiring?.draining ? retiring.run.held?.told : undefined;
  if (!retiring || !told || left(told).length > 0) return state;
  const after = formatDuration(facts.now - told.since);
  const message = `run ${retiring.run.id} drained after ${after}: no connection left, ${retiring.signal} now`;
  log(out, 'info', 'drained', message, { run: retiring.run.id, ms: facts.now - told.since });
  return { ...state, tally: endDrain(state.tally, facts, out) };
}

/** The drain limit: the draining run's stop signal goes, whatever it still holds (a long connection). */
export function drainLimit(state: State, facts: Facts, out: Out): State {
  const retiring = retiringOf(state.tally);
  if (!retiring?.draining) return state;
  const told = retiring.run.held?.told;
  const open = told ? total(told) : 0;
  const silent = told ? told.pids.filter((pid) => !told.conns.has(pid)) : [];
  const quiet = silent.length > 0 ? `, pid(s) ${silent.join(', ')} said nothing` : '';
  const held = `${open} connection(s) still open${quiet}`;
  const limit = formatDuration(facts.config.reloadDrain);
  const message = `run ${retiring.run.id} at the drain limit (${limit}): ${held}; ${retiring.signal} now`;
  log(out, 'info', 'drain-limit', message, { run: retiring.run.id, conns: open });
  return { ...state, tally: endDrain(state.tally, facts, out) };
}
