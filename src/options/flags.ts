import { Command, CommanderError, Option } from 'commander';
import { UsageError } from './errors.js';

// Commander is loaded only when the command line has options of gsup's own in other than their plain forms
// (command-line.ts reads those, from a copy of the options below): `gsup -- node app.js` (the ENTRYPOINT form) and
// `gsup --grace 30s -- node app.js` start without it.

import { USAGE } from './command-line.js';
const EXAMPLES = `
Examples:
  Docker:      ENTRYPOINT ["gsup", "--"]   then   CMD ["node", "server.js"]
               (the 8s kill timeout lands before docker stop's 10 s)
  Kubernetes:  GSUP_GRACE=30s beside terminationGracePeriodSeconds: 30
  npx/tsx:     gsup -- npx tsx src/index.ts      (Ctrl+C reaches the app once)
  pm2:         gsup -- pm2 start app.js -i 2     (stays; stops the apps with pm2 kill)

Stop signals (SIGTERM, SIGINT): the first stops the tree, the second is
forwarded too (it ends --stop-delay), the third SIGKILLs the tree at once.
Ctrl+Z (SIGTSTP, SIGTTIN, SIGTTOU) stops the command's group with SIGSTOP
(--target group; -r replaces this), then gsup; SIGCONT wakes both.

Durations carry a unit: 500ms, 10s, 2m, 1h, 1m30s, 1.5s. A bare number other
than 0 is refused: Docker and Kubernetes count seconds, pm2 milliseconds.
An option that does nothing without another (--health-interval without a
health check, --max-restarts without --restart, --status-host without
--status-port, --ready-timeout without --wait-ready or --reload-signal) is
ignored with a warning.

Exit status: the command's code; 128+N when it died of signal N; 126 not
executable; 127 not found; 125 gsup's own error.
`;

export function buildProgram(version: string, write: (text: string) => void): Command {
  const program = new Command('gsup')
    .usage(USAGE)
    .description(
      'Run a command, forward signals to its whole process tree exactly once, ' +
        'stop the tree within a deadline, exit with its status.',
    )
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .argument('[command...]')
    .passThroughOptions()
    .allowExcessArguments()
    .exitOverride()
    .configureOutput({ writeOut: write, writeErr: () => {} })
    .addHelpText('after', EXAMPLES);
  const option = (flags: string, description: string, env: string, fallback: string) =>
    program.addOption(new Option(flags, `${description} [env ${env}, default ${fallback}]`));
  option(
    '-t, --kill-timeout <duration>',
    'time between the stop signal and SIGKILL of what is still alive (0: at once); the default comes before ' +
      "docker stop's 10 s",
    'GSUP_KILL_TIMEOUT',
    '8s',
  );
  option('--target <mode>', 'where forwarded signals go: group, child or tree', 'GSUP_TARGET', 'group');
  program.addOption(
    new Option(
      '-r, --rewrite <from:to>',
      'rewrite a received signal before forwarding (TERM:INT, 15:2; to 0 drops it), ' +
        'repeatable [env GSUP_REWRITE, comma list]',
    ).argParser(collect),
  );
  option(
    '--stop-delay <duration>',
    'on SIGTERM, wait this long before forwarding (a second stop signal ends the wait)',
    'GSUP_STOP_DELAY',
    '0',
  );
  option(
    '--on-exit <policy>',
    'when the command exits leaving processes: auto, stop, wait or exit',
    'GSUP_ON_EXIT',
    'auto',
  );
  program.addOption(
    new Option(
      '-e, --success-exit <code>',
      "exit 0 when gsup would exit with this code (the command's, or 127 for a missing one), " +
        'repeatable [env GSUP_SUCCESS_EXIT, comma list]',
    ).argParser(collect),
  );
  option('--restart <mode>', 'restart the command when it exits: never, on-failure or always', 'GSUP_RESTART', 'never');
  option(
    '--max-restarts <n>',
    'restarts in a row after runs under 10 s before giving up (N restarts: N+1 runs)',
    'GSUP_MAX_RESTARTS',
    '10',
  );
  option(
    '--restart-delay <duration>',
    'first delay before a restart; doubles after each quick failure, up to 30s',
    'GSUP_RESTART_DELAY',
    '1s',
  );
  option(
    '--health-cmd <command>',
    'health check: healthy when it exits 0 within the timeout (sh -c)',
    'GSUP_HEALTH_CMD',
    'none',
  );
  option(
    '--health-url <url>',
    'health check: healthy on a 200–399 answer within the timeout',
    'GSUP_HEALTH_URL',
    'none',
  );
  option('--health-file <path>', 'health check: a heartbeat file the app touches', 'GSUP_HEALTH_FILE', 'none');
  option(
    '--health-max-age <duration>',
    'how fresh the heartbeat file must be',
    'GSUP_HEALTH_MAX_AGE',
    'twice the interval',
  );
  option('--health-interval <duration>', 'time between health checks', 'GSUP_HEALTH_INTERVAL', '30s');
  option('--health-timeout <duration>', 'time a health check may take', 'GSUP_HEALTH_TIMEOUT', '5s');
  option(
    '--health-retries <n>',
    'failed checks in a row that make the command unhealthy: stopped, then restarted per --restart',
    'GSUP_HEALTH_RETRIES',
    '3',
  );
  const startPeriod = 'failures this soon after a start (or in the first interval) do not count; a success ends it';
  option('--health-start-period <duration>', startPeriod, 'GSUP_HEALTH_START_PERIOD', '0s');
  const startInterval = 'time between health checks until the first success (the first within 1s), in the start period';
  option('--health-start-interval <duration>', startInterval, 'GSUP_HEALTH_START_INTERVAL', '5s');
  const waitReady = "ready only once the app says so: process.send('ready') (node) or READY=1 on $NOTIFY_SOCKET";
  program.addOption(new Option('--wait-ready', `${waitReady} [env GSUP_WAIT_READY=1]`));
  const readyTimeout =
    'with --wait-ready: no word by then is a failed start (stopped; restarted per --restart); ' +
    "a reload's new run not ready by then fails the reload";
  option('--ready-timeout <duration>', readyTimeout, 'GSUP_READY_TIMEOUT', 'none (30s for a reload)');
  const reloadSignal =
    'this signal is not forwarded: it starts a new run beside the serving one, which gets SIGTERM once the new ' +
    'run is ready: listens on a held socket, or says so with --wait-ready (needs --listen or --wait-ready)';
  option('--reload-signal <signal>', reloadSignal, 'GSUP_RELOAD_SIGNAL', 'none');
  const reloadDrain =
    "how long a reload's old run may drain its connections (stops accepting, answers with Connection: close) " +
    'before its SIGTERM; its kill timeout counts after it';
  option('--reload-drain <duration>', reloadDrain, 'GSUP_RELOAD_DRAIN', '6s');
  option(
    '--status-port <port>',
    'serve /livez, /readyz and /metrics (Prometheus) on this port',
    'GSUP_STATUS_PORT',
    'none',
  );
  option(
    '--status-host <host>',
    'the address the status port listens on',
    'GSUP_STATUS_HOST',
    ':: (IPv6 and IPv4; 0.0.0.0 without IPv6)',
  );
  option(
    '--grace <duration>',
    "the orchestrator's grace period: the kill timeout defaults to grace - stop delay - 1s",
    'GSUP_GRACE',
    'none',
  );
  const pdeathsig = "the signal gsup takes as received when its parent dies (tini's -p)";
  option('-p, --pdeathsig <signal>', pdeathsig, 'GSUP_PDEATHSIG', 'none');
  const termination = 'write why gsup ended here, at its end (Kubernetes shows it; at most 4,096 bytes)';
  option('--termination-log <path>', termination, 'GSUP_TERMINATION_LOG', '/dev/termination-log when it exists');
  program.addOption(
    new Option(
      '--listen <[name=]address>',
      'hold a listening TCP socket (PORT, HOST:PORT, [V6]:PORT) and hand it to every run at fds 3…, ' +
        'repeatable [env GSUP_LISTEN, comma list]',
    ).argParser(collect),
  );
  const noPreload = "with --listen: leave the command's NODE_OPTIONS alone (apps that use LISTEN_FDS themselves)";
  program.addOption(new Option('--no-listen-preload', `${noPreload} [env GSUP_LISTEN_PRELOAD=0]`));
  program.addOption(new Option('--no-subreaper', 'do not register as child subreaper (Linux) [env GSUP_SUBREAPER=0]'));
  program.addOption(new Option('--no-pm2', 'do not look for pm2 God daemons [env GSUP_PM2=0]'));
  program.addOption(
    new Option(
      '-v, --verbose',
      'log more: every forwarded signal, tree changes (-vv: debug) [env GSUP_VERBOSE=-1 to 2]',
    ).argParser(increment),
  );
  program.addOption(new Option('-q, --quiet', 'log errors only [env GSUP_VERBOSE=-1]'));
  option('--log-format <format>', 'text or json', 'GSUP_LOG_FORMAT', 'text');
  return program;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function increment(_value: string, previous: number | undefined): number {
  return (previous ?? 0) + 1;
}

/** Options as commander read them, and the command with its arguments. */
export function readFlags(
  argv: string[],
  version: string,
  write: (text: string) => void,
): { flags: Record<string, any>; args: string[] } | 'done' {
  const program = buildProgram(version, write);
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return 'done';
      // The options read before the mistake: a --log-format among them says how to report it.
      const logFormat: unknown = program.opts().logFormat;
      throw Object.assign(new UsageError(`${error.message.replace(/^error: /, '')} (see gsup --help)`), { logFormat });
    }
    throw error;
  }
  return { flags: program.opts(), args: program.args };
}
