import { exitStatus, EXIT_INTERNAL } from './exit-status.js';
import { describeLeaver, describeStartFailure, formatDuration } from '../format.js';
import type { Leavers } from '../ledger/ledger.js';
import { shutOpen } from '../held/held.js';
import { watchTakes } from '../held/untaken.js';
import { restartAfterUnhealthy, STABLE_RUN_MS, type RestartDecision } from './restart.js';
import type { SignalName } from '../../../platform/types.js';
import type { Behind, Beside, Facts, In, LogLevel, Out, Tally, RestartPlan, Run, State, StopCause } from '../state.js';

type Retiring = Extract<Beside, { role: 'retiring' }>;
import type { CommandExit } from '../values.js';

// Decisions shared by the phases: a new run, a restart, and the end.

// While the command's exit is awaited at the end, its state is checked this often.
const CHECK_MS = 50;

export function log(
  out: Out,
  level: LogLevel,
  event: string,
  message: string,
  fields?: { [key: string]: unknown },
): void {
  out.push(fields ? { kind: 'log', level, event, message, fields } : { kind: 'log', level, event, message });
}

export function spawn(tally: Tally, facts: Facts, out: Out): State {
  const { waitReady, readyTimeout } = facts.config;
  const run: Run = { id: tally.runs + 1, startedAt: facts.now, app: waitReady ? 'waiting' : 'ready' };
  out.push({ kind: 'spawn', run: run.id });
  if (waitReady && readyTimeout !== undefined) out.push({ kind: 'set-timer', name: 'ready-timeout', ms: readyTimeout });
  watchTakes(run, facts, out);
  return { phase: 'running', tally: { ...tally, runs: run.id, behind: undefined }, run };
}

export function planOf(decision: RestartDecision, facts: Facts): RestartPlan | undefined {
  if (!decision.restart) return undefined;
  // A run of 10 s or more is no quick failure: the count of restarts in a row starts again.
  const count =
    decision.attempt === 0
      ? `ran ${STABLE_RUN_MS / 1000}s or more: not counted toward --max-restarts ${facts.config.maxRestarts}`
      : `restart ${decision.attempt} of ${facts.config.maxRestarts}`;
  return { delayMs: decision.delayMs, reason: `${decision.reason} (${count})` };
}

export function ending(state: { tally: Tally; run: Run; exit: CommandExit | undefined }): In<'ending'> {
  return { phase: 'ending', tally: state.tally, run: state.run, exit: state.exit };
}

export function enterRestart(
  state: { tally: Tally; run: Run; exit: CommandExit },
  restart: RestartPlan,
  out: Out,
): State {
  log(out, 'notice', 'restart', `command ${restart.reason}: restarting in ${formatDuration(restart.delayMs)}`, {
    delayMs: restart.delayMs,
    reason: restart.reason,
  });
  out.push({ kind: 'set-timer', name: 'restart-delay', ms: restart.delayMs });
  return { phase: 'restarting', tally: state.tally, run: state.run, exit: state.exit, restart };
}

/**
 * After a stop for failed health checks or a failed start: a restart as
 * `--restart` says (a failure), or gsup's exit, never 0.
 */
export function afterUnhealthy(state: In<'ending'>, restart: boolean, cause: StopCause, facts: Facts, out: Out): State {
  const why = cause === 'not-ready' ? 'did not say it was ready in time' : 'was unhealthy';
  const lived = facts.now - state.run.startedAt;
  const decision = restart ? restartAfterUnhealthy(state.tally.restarts, facts.config, lived, why) : undefined;
  const tally = decision ? { ...state.tally, restarts: decision.state } : state.tally;
  const plan = decision && planOf(decision.decision, facts);
  if (plan) return enterRestart({ tally, run: state.run, exit: state.exit ?? { code: null, signal: null } }, plan, out);
  if (decision?.decision.reason) log(out, 'warn', 'restart-give-up', `command ${decision.decision.reason}`);
  return finish({ ...state, tally: { ...tally, unhealthyExit: true } }, out);
}

/**
 * A run that could not be started: its spawn failed (ENOENT, EACCES, EMFILE…), or gsup could not prepare it (a
 * socketpair, a notify socket, a thrown spawn). The first run ends gsup with its exit status (127 not found, 126
 * not executable, else 125), as `docker run` does. A restart's run is a failed start under the restart policy,
 * counted like a crash (back-off, --max-restarts); given up, gsup exits with that same status.
 */
export function startFailed(state: In<'running'>, exit: CommandExit, facts: Facts, out: Out): State {
  const { run } = state;
  if (run.id === 1) return finish({ phase: 'ending', tally: state.tally, run, exit }, out);
  out.push({ kind: 'clear-timer', name: 'ready-timeout' });
  const why = describeStartFailure(exit);
  const { restart } = facts.config;
  const decision = restart === 'never' ? undefined : restartAfterUnhealthy(state.tally.restarts, facts.config, 0, why);
  const tally = decision ? { ...state.tally, restarts: decision.state } : state.tally;
  const plan = decision && planOf(decision.decision, facts);
  if (plan) return enterRestart({ tally, run, exit }, plan, out);
  const given = decision?.decision.reason ?? why;
  log(out, 'warn', 'restart-give-up', `run ${run.id} ${given}`, { run: run.id, errorCode: exit.errorCode });
  return finish({ phase: 'ending', tally, run, exit }, out);
}

/** 6. Exit once libuv has reported the command (the check nudges it) and the orphans are reaped. */
export function finish(state: In<'ending'>, out: Out): State {
  // No run follows: held sockets are shut down, so that clients are refused rather than left waiting.
  const tally = shutOpen(state.tally, 'no run follows', out);
  out.push(state.exit ? { kind: 'sweep' } : { kind: 'ensure-timer', name: 'check', ms: CHECK_MS });
  return tally === state.tally ? state : { ...state, tally };
}

export function exitCode(tally: Tally, exit: CommandExit, facts: Facts): number {
  if (tally.faults > 0) return EXIT_INTERNAL;
  const status = exitStatus(exit, facts.config.successExit, facts.signalNumber);
  // Stopped for failed health checks: an app that exits 0 on SIGTERM has still failed.
  return tally.unhealthyExit && status === 0 ? 1 : status;
}

export function done(tally: Tally, exit: CommandExit, code: number, out: Out): State {
  // gsup's end ends a run's retiring still under way (its exit not reported yet): said and counted first.
  if (tally.beside?.role === 'retiring') tally = retired(tally, tally.beside, out);
  out.push({ kind: 'end', exitCode: code, exit });
  return { phase: 'done', tally, exitCode: code, exit };
}

/**
 * 5. A retiring run's end, whatever ends it: one summary line with its status (no crash, no restart, never gsup's
 * status), counted: `ok`, or `killed` when SIGKILL had to end it. A failed next run was counted when it failed; an
 * old run that exited first, as a restart.
 */
export function retired(tally: Tally, retiring: Retiring, out: Out): Tally {
  const { run, exit, cause } = retiring;
  out.push(
    { kind: 'clear-timer', name: 'retire-kill-timeout' },
    { kind: 'clear-timer', name: 'drain-limit' },
    { kind: 'end-retire', run: run.id, exit, cause },
  );
  const { reloads } = tally;
  let counted = reloads;
  if (cause === 'reloaded')
    counted =
      retiring.killedAt === undefined ? { ...reloads, ok: reloads.ok + 1 } : { ...reloads, killed: reloads.killed + 1 };
  return { ...tally, beside: undefined, reloads: counted };
}

/** A stop begins: from now on what gsup reaps is summed up (see Behind). */
export function watchBehind(tally: Tally, signal: SignalName): Tally {
  return { ...tally, behind: { signal, wrapper: false, zero: false, failure: undefined } };
}

/** Exits gsup reaped during the stop: 0, a death of the stop signal (what the wrapper did too), or a failure. */
export function sumBehind(behind: Behind, exits: readonly CommandExit[], facts: Facts): Behind {
  let { zero, failure } = behind;
  for (const exit of exits) {
    if (exit.code === 0) zero = true;
    else if (!diedOf(exit, behind.signal, facts)) failure = exit;
  }
  return { ...behind, zero, failure };
}

/** Of that signal, or 128+N for it (a shell that passes it on says so). */
function diedOf(exit: CommandExit, signal: SignalName, facts: Facts): boolean {
  return exit.signal === signal || exit.code === 128 + facts.signalNumber(signal);
}

/**
 * The status behind a wrapper that died of the stop signal: the last
 * failure gsup reaped, else 0 when something exited 0; undefined when the
 * command's own status stands.
 */
export function behindWrapper(behind: Behind | undefined, exit: CommandExit, facts: Facts): CommandExit | undefined {
  if (!behind?.wrapper || !diedOf(exit, behind.signal, facts)) return undefined;
  return behind.failure ?? (behind.zero ? { code: 0, signal: null } : undefined);
}

/** At -v: the members found outside their group right after its send, and what the ledger made of them. */
export function sayLeavers({ missed, unsure }: Leavers, signal: SignalName, out: Out): void {
  for (const leaver of [...missed, ...unsure]) {
    const fields = {
      pid: leaver.info.pid,
      pgid: leaver.info.pgid,
      now: leaver.pgid,
      reached: !missed.includes(leaver),
    };
    log(out, 'info', 'left-group', describeLeaver(leaver, signal, missed.includes(leaver)), fields);
  }
}
