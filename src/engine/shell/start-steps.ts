import type { Logger } from '../../output/log.js';
import type { Platform, SignalName } from '../../platform/index.js';

// Start-up steps that ask the platform for something and say why when it cannot.

/**
 * Make orphans of the tree come to gsup and be reaped here: always as PID 1,
 * as child subreaper when asked. Returns whether gsup reaps.
 */
export function adoptOrphans(platform: Platform, logger: Logger, subreaper: boolean): boolean {
  const pid1 = process.pid === 1;
  if (!platform.adoptOrphans || (!pid1 && !subreaper)) return false;
  const why = platform.adoptOrphans(!pid1);
  if (why === undefined) return true;
  logger.warn(
    'no-reaping',
    pid1
      ? `as PID 1 gsup cannot reap orphaned zombies: ${why}`
      : `cannot become child subreaper: ${why}; daemons that double-fork will leave the tree`,
    { reason: why },
  );
  return false;
}

/**
 * Whether each signal goes through an identity that cannot be reused
 * (pidfds): said once, at start, with why not (an old kernel, a seccomp
 * filter, no fd left, no koffi) — the checked kill(2) that replaces it is a
 * window, however small.
 */
export function checkIdentity(platform: Platform, logger: Logger): void {
  const { problem, note } = platform.checkIdentity?.() ?? {};
  if (problem) logger.warn('no-pidfds', problem, { reason: problem });
  if (note) logger.info('pidfd-groups', note, { reason: note });
}

/**
 * A flood of signals must not fill Node's signal pipe, or the SIGTERM after
 * it is dropped: widen the pipe, found with `probe` (a signal to self).
 */
export function widenSignalPipe(platform: Platform, logger: Logger, probe: () => void): void {
  if (!platform.widenSignalPipe) return;
  const result = platform.widenSignalPipe(probe);
  if (typeof result === 'number')
    logger.debug('signal-pipe', `signal pipe widened to ${result} bytes (${result / 16} signals)`, { bytes: result });
  else logger.info('signal-pipe', `signal pipe not widened: ${result}`, { reason: result });
}

/** How long the command runs before the start's own work that it does not wait for is done (AfterStart). */
export const AFTER_START_MS = 20;

/**
 * The start's own work that the command does not wait for (settleStart below, the memory cgroup's count, the
 * command's line): done once the command has run AFTER_START_MS. The spawn gives the loop back before the command
 * has run at all (posix_spawn waits for its exec only): a command gone by then (`gsup -- true`) ends gsup with none
 * of it done, and nothing needs it before (what does asks for it, or looks: the pm2 CLI, whether the command is a
 * pm2 manager). After that moment, work given is done on the loop's next turn.
 */
export class AfterStart {
  private waiting: Array<() => void> | undefined = [];

  /** `act` once the command has run a while (every act given is done, the supervision over or not). */
  readonly later = (act: () => void): void => {
    if (this.waiting) this.waiting.push(act);
    else setImmediate(act);
  };

  /** The first run is spawned: the moment comes in AFTER_START_MS (never keeping gsup alive by itself). */
  spawned(): void {
    setTimeout(() => {
      const acts = this.waiting ?? [];
      this.waiting = undefined;
      for (const act of acts) act();
    }, AFTER_START_MS).unref();
  }
}

/**
 * What start-up leaves until the command runs (AfterStart): the pidfd check said once, the pm2 CLI
 * found, gsup's own group read (never a target: the first look, a stop's, then has no /proc read more to wait
 * for), and, given the probe (the CLI's), the signal pipe widened and the real-time signals caught.
 */
export function settleStart(
  platform: Platform,
  logger: Logger,
  pm2: { findCli(): void } | undefined,
  ownGroup: (pgid: number) => void,
  probe: (() => void) | undefined,
): void {
  // The command runs by now: a step that throws (no fd left: EMFILE) is said, never gsup's end.
  const step = (name: string, act: () => void) => {
    try {
      act();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      logger.warn('start-step', `${name} skipped: ${reason}`, { step: name, reason });
    }
  };
  step('the pidfd check', () => checkIdentity(platform, logger));
  step("the pm2 CLI's search", () => pm2?.findCli());
  step("the read of gsup's own group", () =>
    platform.processInfo(process.pid).then(
      (info) => info && ownGroup(info.pgid),
      () => {},
    ),
  );
  if (probe) step("the signal pipe's widening", () => widenSignalPipe(platform, logger, probe));
  if (probe) step("the real-time signals' catch", () => catchRealTime(platform, logger));
}

/**
 * The real-time signals caught (the CLI's: a library leaves its host's signals alone), so that one sent to gsup
 * no longer ends it by its default action with the tree left running (PID 1 ignored them). Not forwarded: gsup
 * forwards signals 1-31, and says each real-time one once.
 */
export function catchRealTime(platform: Platform, logger: Logger): void {
  const said = new Set<number>();
  const caught = platform.catchRealTimeSignals?.((signo) => {
    if (said.has(signo)) return;
    said.add(signo);
    const message = `signal ${signo} (a real-time signal) is not forwarded: gsup forwards signals 1-31, and runs on`;
    logger.warn('signal-not-forwarded', message, { signo });
  });
  if (caught && caught.length > 0)
    logger.debug('real-time-signals', `real-time signals ${caught[0]}-${caught[caught.length - 1]} caught`, {
      first: caught[0],
      last: caught[caught.length - 1],
    });
}

/**
 * Group target with gsup's own terminal (`docker run -it`): the command's
 * new session takes it, so shells have job control and /dev/tty opens.
 * Returns the argv prefix that does it at the spawn, or undefined (a plain
 * spawn: the command's session then has no terminal, as before).
 */
export function handOverTerminal(
  platform: Platform,
  logger: Logger,
  expect: (signal: SignalName) => void,
): string[] | undefined {
  const result = platform.handOverTerminal?.(expect);
  if (typeof result === 'string') {
    logger.warn('no-terminal', `the command gets no controlling terminal: ${result}`, { reason: result });
    return undefined;
  }
  if (result)
    logger.debug('terminal', `the terminal goes to the command's session (${result.join(' ')})`, { wrapper: result });
  return result;
}
