import { FIRST_FD, handedCount, REPORT_FD } from '../engine/listen/wire.js';
import { execNodeAgain, ownStartTime } from '../platform/linux/process/reexec.js';
import { loadMarker } from '../platform/linux/process/stop-handover.js';
import type { SignalName } from '../platform/types.js';

/**
 * gsup apart from the app it supervises. gsup is a Node program started with
 * the app's environment, and NODE_OPTIONS is the app's: a preload (an APM
 * agent: its signal handlers, timers, sockets), `--inspect` (its port), heap
 * flags. When it is set, gsup starts Node again in the same process
 * (execve(2): the same pid, so PID 1 stays PID 1) without it, and hands it
 * back to the command unchanged. What this costs is paid only then.
 *
 * Stop signals are kept on the way: the stop signals' handler becomes the
 * marker of stop-handover.ts first (the kernel keeps its alarm across
 * execve), and what Node took before that (its start-up handler, or a
 * preload's signal handle, drained in one turn of the loop: to gsup alone,
 * the preload's listeners taken away, so that one which exits, as
 * OpenTelemetry's does, cannot end gsup) is carried over in the environment,
 * with NODE_OPTIONS, under GSUP_APART, with this process's pid and start
 * time (both kept by execve: as PID 1 the pid alone says nothing). Windows
 * stay (docs/limits.md): as PID 1, a stop signal in the milliseconds between
 * the execve and the new Node's first handler is dropped by the kernel, as
 * in the first milliseconds of any Node program as PID 1, and so is one
 * that comes while a preload loads, before it listens (its listener hides
 * that Node's start-up handler took it); one that comes while a preload
 * whose loading waits on the loop (`--import`) listens goes to the preload
 * before gsup's first line runs. gsup warns when one of these was open.
 */
export interface Carried {
  /** Signals the process gsup replaced took, in order: the new one treats them as received first. */
  held: SignalName[];
  /** The marker was in across execve: its alarm says whether a stop signal came on the way. */
  armed: boolean;
  /** Why gsup runs with the app's NODE_OPTIONS after all. */
  together?: string;
  /** gsup's parent when gsup's first line ran (before execve): `-p` tells a parent that died since. */
  ppid?: number;
  /**
   * A preload listened for stop signals when gsup's first line ran, and one sent while it loaded may never have
   * reached gsup: as PID 1 (before it listened), or loaded by `--import` (while its loading waited).
   */
  preloadListens?: boolean;
}

const KEY = 'GSUP_APART';
const STOPS = ['SIGTERM', 'SIGINT'] as const;
// Options that load a preload asynchronously: Node's loop may turn (and hand out signals) before gsup's first line.
const ASYNC_PRELOAD = /(?:^|\s)--(?:import|loader|experimental-loader)(?:[=\s]|$)/;

/** Calls `then` in the process that goes on: this one (nothing to leave, or it could not), or the new one. */
export function apart(then: (carried: Carried) => void): void {
  const moduleUrl = import.meta.url;
  const ppid = process.ppid;
  const env = process.env;
  const note = env[KEY];
  delete env[KEY];
  const nodeOptions = env.NODE_OPTIONS;
  const listened = STOPS.filter((signal) => process.listenerCount(signal) > 0);
  const preloadListens =
    nodeOptions !== undefined && listened.length > 0 && (process.pid === 1 || ASYNC_PRELOAD.test(nodeOptions));
  const here: Carried = { held: [], armed: false, ppid, preloadListens };
  if (note !== undefined && nodeOptions === undefined) return then(arrived(note) ?? here);
  if (!nodeOptions?.trim()) return then(here);
  if (process.platform !== 'linux') return then({ ...here, together: `not on ${process.platform}` });
  if (env.GSUP_FFI === '0') return then({ ...here, together: 'GSUP_FFI=0' });
  const marker = loadMarker(moduleUrl, process.pid === 1);
  // An alarm kept across the exec that started gsup: the marker could not be told from it.
  const pending = marker?.alarm(0) ?? 0;
  if (pending > 0) marker?.alarm(pending);
  const armed = marker !== undefined && pending === 0;
  const held: SignalName[] = [];
  // Node's start-up handler already fired (as PID 1 its re-raise was ignored): a stop signal came.
  if (armed) for (const signal of STOPS) if (marker.swap(signal)) held.push(signal);
  const go = () => {
    const { NODE_OPTIONS: _, ...rest } = env as Record<string, string>;
    const start = ownStartTime();
    const carried = { pid: process.pid, start, nodeOptions, held, armed, ppid, preloadListens };
    // Sockets handed to gsup (systemd's LISTEN_FDS, a gsup around this one) go across too: they are gsup's. So
    // does the report channel of a gsup around this one (its end says the run is done with the sockets).
    const count = handedCount(env, process.pid);
    const handed = Array.from({ length: count }, (_, index) => FIRST_FD + index);
    if (count > 0 && env[REPORT_FD] === String(FIRST_FD + count)) handed.push(FIRST_FD + count);
    const why =
      start === undefined
        ? 'no /proc/self/stat'
        : execNodeAgain({ ...rest, [KEY]: JSON.stringify(carried) }, moduleUrl, handed);
    then({ held, armed, ppid, together: why, preloadListens });
  };
  // A preload's SIGTERM handle: what libuv took before the swap comes out in the next poll, to gsup's listener
  // alone (added first, so that the handle stays): the preload's own may exit, and it is the app's, not gsup's.
  if (listened.length === 0) return go();
  for (const signal of listened) {
    const preloads = process.listeners(signal);
    process.on(signal, () => held.push(signal));
    for (const listener of preloads) process.removeListener(signal, listener);
  }
  // Two checks: after `--import`, this line runs inside a turn of the loop, whose own check comes before any poll.
  setImmediate(() => setImmediate(go));
}

/**
 * The new process: NODE_OPTIONS back for the command, and what the old one
 * carried. Only a note this very process wrote before its execve counts (same
 * pid and same start time: as PID 1 every pid is 1); anything else in
 * GSUP_APART (set by hand, inherited from a gsup around this one) is dropped,
 * and it carries nothing but stop signals.
 */
function arrived(note: string): Carried | undefined {
  let carried: unknown;
  try {
    carried = JSON.parse(note);
  } catch {
    return undefined;
  }
  if (typeof carried !== 'object' || carried === null) return undefined;
  const { pid, start, nodeOptions, held, armed, ppid, preloadListens } = carried as Record<string, unknown>;
  if (pid !== process.pid || typeof start !== 'string' || start !== ownStartTime()) return undefined;
  if (typeof nodeOptions === 'string') process.env.NODE_OPTIONS = nodeOptions;
  const stops = Array.isArray(held)
    ? held.filter((s): s is SignalName => STOPS.includes(s as (typeof STOPS)[number]))
    : [];
  return {
    held: stops,
    armed: armed === true,
    ppid: Number.isInteger(ppid) ? (ppid as number) : undefined,
    preloadListens: preloadListens === true,
  };
}
