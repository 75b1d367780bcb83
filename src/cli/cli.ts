import { writeSync } from 'node:fs';
import { createLogger, Logger } from '../output/log.js';
import { parseCommandLine, type CliOptions } from '../options/cli-options.js';
import { listen, type SignalInbox } from './inbox.js';
import { EXIT_INTERNAL } from '../engine/machine/outcomes/exit-status.js';
import { formatDuration } from '../engine/machine/format.js';
import { StatusBoard } from '../engine/shell/status-board.js';
import { supervise } from '../engine/shell/supervisor.js';
import { npmRunningGsup } from './npm-parent.js';
import { askForParentDeath } from './parent-death.js';
import { currentPlatform } from '../platform/index.js';
import { HeldSockets } from '../engine/listen/held.js';
import { takeHanded, type Adopted } from '../engine/listen/handed.js';
import { installPreload } from '../engine/listen/preload-file.js';
import type { ListenAddress } from '../engine/listen/address.js';
import { withoutSettings } from '../options/environment.js';
import { UsageError } from '../options/errors.js';
import { STOP_SIGNALS } from '../platform/signals.js';
import { terminationLogPath, terminationMessage, TerminationNotes, writeTerminationLog } from './termination.js';

declare const GSUP_VERSION: string;

// A second after the start (see heapForMemory).
const HEAP_FOR_MEMORY_AFTER_MS = 1000;

/**
 * gsup allocates little and seldom: V8's heap sized for memory, not speed (as
 * PID 1 under churn its plateau was 14.5 MiB with it, 16.4 without:
 * bench/soak.js). And its young generation kept at the size it has a second
 * in: V8 doubles it whenever what outlived its scavenges since it last grew
 * adds up to its size, and shrinks it only at a full GC, or while less than
 * ~1 MB/s is allocated — as PID 1 among daemons (a look for each forwarded
 * signal, ~1.5 MB/s) it grew from 2 to 8 MiB within ~80 s (V8 raises a
 * growth factor under 2 to 2 only at its start). Set a second after the
 * start, not first thing: V8 refuses the code cache of whatever is compiled
 * after its flags change, Node's for its own modules (node:child_process
 * alone then costs 3 ms more) and the build's for dist/ (src/cli/code-cache.ts);
 * and the start pays only for starting. And no TurboFan from then on: each
 * optimizing compile malloc'd 2-5 MiB (its zones) for ~100 ms, gsup's peaks
 * as PID 1 under churn (bench/soak.js 120 --daemons: 18.8 MiB, 14.4-14.8
 * without). Its code mostly waits on syscalls: its CPU there stayed about the
 * same (10.1-10.5 s in 120 s, against 9.8). TurboFan comes back when gsup
 * is asked to stop (`optimizeForTheStop`): a stop of 10,000 processes took
 * 4.0 s without it, 2.9 s with it (bench/run.js --only stops).
 */
function heapForMemory(): void {
  const set = () =>
    void import('node:v8').then((loaded) => {
      v8 = loaded;
      // A stop asked for within the first second keeps TurboFan (optimizeForTheStop).
      v8.setFlagsFromString(`--optimize-for-size --semi-space-growth-factor=1${stopAsked ? '' : ' --no-opt'}`);
    });
  setTimeout(set, HEAP_FOR_MEMORY_AFTER_MS).unref();
}

let v8: typeof import('node:v8') | undefined;
let endAtOnce: ((code: number) => void) | undefined;

// For the build's --listen start (scripts/code-cache.cjs): whether it runs with the preload and writes nothing.
export { packagedServes } from '../engine/listen/preload-file.js';

/** Ends gsup with `code` (bin/gsup.cjs, once main() has returned): Node's 'exit' listeners, then at once if it can. */
export function end(code: number): void {
  const quick = endAtOnce;
  if (quick) process.once('exit', () => quick(code));
  process.exit(code);
}
let stopAsked = false;

/** Asked to stop: TurboFan again (heapForMemory), once; a stop's looks at a large tree are hot loops. */
function optimizeForTheStop(): void {
  if (stopAsked) return;
  stopAsked = true;
  v8?.setFlagsFromString('--opt');
}

async function run(options: CliOptions, inbox: SignalInbox, started: () => void): Promise<number> {
  const { command, args, verbosity, logFormat, status, grace, pdeathsig, terminationLog, ignored, ...rest } = options;
  const { listen, listenPreload, ...config } = rest;
  const logger = await createLogger({ verbosity, format: logFormat });
  for (const { option, needs, message } of ignored) logger.warn('ignored-option', message, { option, needs });
  // Checked before anything runs (resolved against the start directory: gsup moves to / below).
  const termination = await terminationLogPath(terminationLog?.[0], terminationLog?.[1]);
  const notes = termination !== undefined ? new TerminationNotes(logger) : undefined;
  if (grace !== undefined) {
    logger.info(
      'grace',
      `grace ${formatDuration(grace)}: stop delay ${formatDuration(config.stopDelay)}, ` +
        `then the kill timeout ${formatDuration(config.killTimeout)}`,
      {
        graceMs: grace,
        stopDelayMs: config.stopDelay,
        killTimeoutMs: config.killTimeout,
      },
    );
  }
  if (inbox.together) {
    logger.warn(
      'node-options',
      `NODE_OPTIONS is gsup's too (${inbox.together}): ` +
        "a preload's signal handlers, timers and ports run in gsup as well",
      { why: inbox.together },
    );
  }
  if (inbox.preloadListens) {
    logger.warn(
      'preload-stop',
      'a preload in NODE_OPTIONS listens for SIGTERM/SIGINT: a stop signal sent while it was still loading may ' +
        "never have reached gsup (docs/limits.md); load it on the app's own command (node --require …) instead",
    );
  }
  // Before the spawn: a parent gone since gsup's first line stops gsup before the command starts.
  if (pdeathsig) askForParentDeath(pdeathsig, inbox.ppid, currentPlatform(), logger, inbox.receive);
  warnIfTermStopsNothing(config.rewrite, logger);
  const npm = npmRunningGsup(process.env);
  if (npm && !(await import('node:tty')).isatty(0)) {
    logger.warn(
      'npm',
      `started by ${npm} with no terminal: on SIGTERM npm exits at once and leaves gsup and the command running; ` +
        'run node_modules/.bin/gsup (or exec it) instead',
      { npm },
    );
  }
  // Held sockets and the status endpoint are bound before anything runs: a taken port is gsup's own error (125).
  // Sockets handed to gsup itself (systemd's socket activation, a gsup around it) are held instead, or closed.
  const handed = takeHanded(listen, currentPlatform(), logger);
  if (typeof handed === 'string') throw new UsageError(handed);
  const held = listen.length > 0 ? holdSockets(listen, handed, logger) : undefined;
  const board = status && new StatusBoard();
  // node:http is loaded only then: `gsup -- node app.js` does not pay for it at start-up.
  if (status && board) await (await import('./status-server.js')).serveStatus(board, status.port, status.host);
  // The preload for unchanged Node apps, where no other user can change it (none: said once, apps start).
  // After every check that can end gsup with a usage error. Never removed: processes of the tree may outlive gsup.
  const installed = held && listenPreload ? installPreload(logger) : undefined;
  const preloadFile = typeof installed === 'object' ? installed : undefined;
  // gsup keeps no mount busy, and the command never sees its parent elsewhere: / before the first spawn.
  const cwd = leaveStartDirectory(logger);
  // stdio as Node found it, before the command can change it: then whether gsup's exit must put it back.
  endAtOnce = currentPlatform().quickExit?.();
  const handle = supervise(command, args, {
    ...config,
    cwd,
    logger,
    inbox,
    status: board,
    // gsup's own settings are no concern of the command's (a gsup it starts must not take them).
    env: withoutSettings(process.env),
    listen: held && { sockets: held, preload: listenPreload, preloadFile },
    // Job control: after forwarding SIGTSTP & co., stop gsup too, so the shell sees the job stopped.
    suspendSelf: () => process.kill(process.pid, 'SIGSTOP'),
    stopping: optimizeForTheStop,
    terminal: true,
  });
  started();
  // The handlers stay until gsup exits: a signal now must not end gsup and replace the command's status.
  const result = await handle.exited;
  if (result.error) {
    // The text form stays one plain line, as a shell says it; json, like every other line.
    if (logFormat === 'json') logger.error('spawn-failed', result.error, { command, exitCode: result.exitCode });
    else logger.say(`gsup: ${result.error}`);
  }
  if (termination !== undefined && notes) {
    await writeTerminationLog(termination, terminationMessage(notes.notes, result), logger);
  }
  // The last lines (the stop's summary) still come out, unless stderr does not drain (then gsup goes).
  await logger.flush();
  return result.exitCode;
}

/** The sockets of --listen, handed to gsup or bound, listening (each said at -v); one not had is a usage error. */
function holdSockets(listen: ListenAddress[], handed: Map<number, Adopted>, logger: Logger): HeldSockets {
  const held = HeldSockets.bind(listen, currentPlatform(), handed);
  if (typeof held === 'string') throw new UsageError(held);
  held.describe(logger);
  return held;
}

/**
 * A rule that drops SIGTERM or makes it no stop signal (`-r TERM:0`,
 * `-r TERM:HUP`): docker stop, podman stop and Kubernetes send SIGTERM, so
 * their stop would do nothing until their own SIGKILL. Said once, at start.
 */
function warnIfTermStopsNothing(rewrite: CliOptions['rewrite'], logger: Logger): void {
  if (!rewrite.has('SIGTERM')) return;
  const to = rewrite.get('SIGTERM') ?? null;
  if (to === 'SIGKILL' || (to && STOP_SIGNALS.has(to))) return;
  const rule = to ? `turns SIGTERM into ${to}, which does not stop the tree` : 'drops SIGTERM';
  const message = `the rewrite ${rule}: docker stop and Kubernetes will SIGKILL everything when their grace ends`;
  logger.warn('rewrite-no-stop', message, { signal: 'SIGTERM', to });
}

/**
 * Moves gsup to /; returns the start directory, where every run of the
 * command starts. One that was removed (getcwd fails) is no reason to stay
 * in it: gsup moves all the same, and the command starts in / (said once).
 */
function leaveStartDirectory(logger: Logger): string | undefined {
  let start: string | undefined;
  try {
    start = process.cwd();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    const message = `the start directory is gone (getcwd: ${code}): the command starts in /`;
    logger.warn('no-start-directory', message, { code });
  }
  try {
    process.chdir('/');
  } catch {
    // / cannot be entered: stay
  }
  return start;
}

const LINE_MAX = 300;

function clip(line: string): string {
  return line.length <= LINE_MAX ? line : `${line.slice(0, LINE_MAX)}… (${line.length} characters)`;
}

/** One line on stderr; a reader that is gone is no error of gsup's. */
function say(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // EPIPE, EBADF, EAGAIN: nothing more to say to anyone
  }
}

/**
 * The gsup command line: returns the exit status. `inbox`: the signal
 * handlers bin/gsup.cjs installed before this bundle loaded; `started`, run
 * once the first run is spawned (the build's start, which makes the code
 * cache, changes no flag: scripts/code-cache.cjs).
 */
export async function main(
  argv: string[] = process.argv.slice(2),
  inbox: SignalInbox = listen(),
  started: () => void = heapForMemory,
): Promise<number> {
  const version = typeof GSUP_VERSION === 'string' ? GSUP_VERSION : '0.0.0';
  try {
    const request = await parseCommandLine(argv, process.env, version, (text) => process.stdout.write(text));
    if (request.kind === 'done') return 0;
    return await run(request.options, inbox, started);
  } catch (error) {
    // By name: the flags file is a bundle of its own, with its own UsageError class.
    const usage = error instanceof Error && error.name === 'UsageError';
    const message = usage ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    // One line, of a readable length, whatever value it quotes (commander's messages quote what they got).
    const line = clip(message.split('\n')[0]);
    // Under --log-format json (or its variable), as every other line: one JSON object.
    const logFormat = (error as { logFormat?: unknown } | undefined)?.logFormat ?? process.env.GSUP_LOG_FORMAT;
    if (logFormat !== 'json') say(`gsup: ${line}`);
    else new Logger({ format: 'json' }).error(usage ? 'usage' : 'internal', line, { exitCode: EXIT_INTERNAL });
    return EXIT_INTERNAL;
  }
}
