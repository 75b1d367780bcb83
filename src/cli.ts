import { createLogger } from './log.js';
import { parseCommandLine, type CliOptions } from './options/cli-options.js';
import { forwardableSignals } from './options/signals.js';
import { EXIT_INTERNAL } from './engine/exit-status.js';
import { supervise, type SupervisorHandle } from './engine/supervisor.js';

declare const GSUP_VERSION: string;

/**
 * Listen for every catchable signal (as PID 1 an unhandled one is ignored).
 * Installed before the command is spawned: a signal that comes in between
 * is held and handed over, not left to kill gsup by default.
 */
function relaySignals(): { attach: (handle: SupervisorHandle) => void; detach: () => void } {
  let target: SupervisorHandle | undefined;
  const held: NodeJS.Signals[] = [];
  const listeners = forwardableSignals().map((signal) => {
    const listener = () => (target ? target.signal(signal) : held.push(signal));
    process.on(signal, listener);
    return () => process.off(signal, listener);
  });
  return {
    attach(handle) {
      target = handle;
      for (const signal of held.splice(0)) handle.signal(signal);
    },
    detach() {
      for (const remove of listeners) remove();
    },
  };
}

async function run(options: CliOptions): Promise<number> {
  const relay = relaySignals();
  const logger = await createLogger({ verbosity: options.verbosity, format: options.logFormat });
  const handle = supervise(options.command, options.args, {
    killTimeout: options.killTimeout,
    target: options.target,
    rewrite: options.rewrite,
    stopDelay: options.stopDelay,
    onExit: options.onExit,
    successExit: options.successExit,
    subreaper: options.subreaper,
    pm2: options.pm2,
    restart: options.restart,
    maxRestarts: options.maxRestarts,
    restartDelay: options.restartDelay,
    logger,
    // Job control: after forwarding SIGTSTP & co., stop gsup too, so the shell sees the job stopped.
    suspendSelf: () => process.kill(process.pid, 'SIGSTOP'),
  });
  relay.attach(handle);
  const result = await handle.exited;
  relay.detach();
  if (result.error) process.stderr.write(`gsup: ${result.error}\n`);
  return result.exitCode;
}

/** The gsup command line: returns the exit status. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const version = typeof GSUP_VERSION === 'string' ? GSUP_VERSION : '0.0.0';
  try {
    const request = await parseCommandLine(argv, process.env, version, (text) => process.stdout.write(text));
    if (request.kind === 'done') return 0;
    return await run(request.options);
  } catch (error) {
    // By name: the flags file is a bundle of its own, with its own UsageError class.
    const message = error instanceof Error && error.name === 'UsageError' ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    process.stderr.write(`gsup: ${message}\n`);
    return EXIT_INTERNAL;
  }
}
