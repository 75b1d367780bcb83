import type { SignalName } from '../../platform/index.js';
import { signalNumber } from '../../signals.js';
import type { CommandExit } from '../children/spawn.js';
import type { ForwardFacts } from '../delivery/forwarder.js';
import { exitStatus, isWrapper } from '../machine/exit-status.js';
import { describeExit } from '../machine/format.js';
import { leftoversAwaited, stopRoundSignal, treeQuiet } from '../machine/queries.js';
import { runsPm2Cli } from '../pm2/daemons.js';
import { logTreeChanges, type TreeSnapshot } from '../tree/tree.js';
import { messageOf } from './event-loop.js';
import type { EngineEvent } from './queue.js';
import type { Shell, Table } from './tables.js';

/**
 * What each event means, as inputs of the machine, one entry per kind: an
 * event nobody handles does not compile. Shared by the loop and the fast path.
 */
export function eventTable(shell: Shell): Table<EngineEvent, void | Promise<void>> {
  return {
    signal: (event) => signalled(shell, event.signal),
    stop: (event) => shell.apply({ kind: 'stop-signal', signal: event.signal, reason: event.reason }),
    exit: (event) => exited(shell, event.run, event.exit),
    child: () => {
      if (!reap(shell)) shell.apply({ kind: 'child-gone', treeGone: treeGone(shell) });
    },
    tree: (event) => looked(shell, event.snapshot),
    timer: (event) =>
      event.name === 'check'
        ? shell.lostChild.check(shell.run, shell.state, () => reap(shell))
        : shell.apply({ kind: 'timer', name: event.name }),
    health: (event) => {
      const input = shell.health?.answered(shell.state, event.run, event.result);
      if (input) shell.apply(input);
    },
    'app-said': (event) => shell.apply(event),
    fault: (event) => shell.apply({ kind: 'fault', message: messageOf(event.error) }),
  };
}

/** A signal received: a stop goes to the machine; any other is forwarded now (forward first, log after). */
function signalled(shell: Shell, received: SignalName): void {
  shell.lostChild.signalled();
  const intake = shell.intake.take(received);
  if (intake.kind === 'stop') shell.apply({ kind: 'stop-signal', signal: intake.signal, reason: intake.reason });
  else if (intake.kind === 'forward') {
    if (intake.signal) shell.options.status?.countForward(intake.signal);
    const how = { suspend: intake.suspend, received };
    shell.parts.forwarder.forward(intake.signal, forwardFacts(shell), how);
  }
  shell.intake.note(received, intake);
}

function exited(shell: Shell, runId: number, exit: CommandExit): void {
  const { run, parts, logger, options } = shell;
  if (runId !== run.id) return;
  run.exit = exit;
  if (run.pid !== undefined) parts.children.spawnedByNode.delete(run.pid);
  if (options.status) options.status.lastExitCode = exitStatus(exit, shell.config.successExit, signalNumber);
  // `gsup -- pm2 start …`: the command is the pm2 CLI, and its life is known to the tick.
  const command = parts.tree.commandInfo;
  if (parts.pm2 && command && runsPm2Cli(shell.command, run.args))
    parts.pm2.cliLived(command, shell.platform.startTimeNow());
  if (exit.errorCode === undefined) {
    const message = `pid ${run.pid} left the tree: the command exited (${describeExit(exit)})`;
    logger.info('command-exit', message, { pid: run.pid, code: exit.code, signal: exit.signal });
  }
  reap(shell);
  const mayHaveDaemon = parts.pm2?.pidFileExists() ?? false;
  const wrapper = isWrapper(command && command.pid === run.pid ? command.name : shell.command);
  const gone = treeGone(shell);
  shell.apply({ kind: 'command-exit', run: runId, exit, sent: run.sent, treeGone: gone, mayHaveDaemon, wrapper });
}

/** A look at the tree: what waited for it goes out, and the machine decides on it (with a stop round's route). */
async function looked(shell: Shell, snapshot: TreeSnapshot): Promise<void> {
  const { parts, logger, platform } = shell;
  if (shell.ownPgid === -1) shell.ownPgid = (await platform.processInfo(process.pid))?.pgid ?? -1;
  if (logger.enabled('info') && !treeQuiet(shell.state)) logTreeChanges(logger, parts.tree, snapshot);
  shell.options.status?.treeLooked(snapshot.alive.length);
  parts.pm2?.noteClis(snapshot);
  if (parts.pm2 && (snapshot.joined.length > 0 || leftoversAwaited(shell.state) || shell.managers.length > 0)) {
    shell.managers = await parts.pm2.find(snapshot);
    // A God daemon that `pm2 start` left may be known by its pid file alone (no subreaper): look again with it.
    if (shell.managers.some((manager) => !snapshot.alive.some((info) => info.pid === manager.info.pid)))
      return parts.scans.request();
  }
  const facts = forwardFacts(shell);
  parts.forwarder.deliverPending(snapshot, facts);
  const { run } = shell;
  const signal = stopRoundSignal(shell.state);
  const route =
    signal === undefined ? undefined : { ...parts.forwarder.plan(snapshot, signal, true, facts), commandPid: run.pid };
  const commandPgid = run.pgid ?? snapshot.alive.find((info) => info.pid === run.pid)?.pgid;
  shell.apply({ kind: 'looked', look: snapshot, commandPgid, route });
}

/** Reaps a batch (its statuses to the machine); true when more wait (another `child` event is queued for them). */
function reap(shell: Shell): boolean {
  const { reaped, more, nodeZombie } = shell.parts.children.reap();
  if (reaped.length > 0) shell.apply({ kind: 'reaped', exits: reaped });
  if (more) shell.queue.push({ kind: 'child' });
  if (nodeZombie) shell.lostChild.soon();
  return more;
}

function treeGone(shell: Shell): boolean {
  return shell.parts.children.treeGone(shell.managers.some((manager) => manager.info.ppid !== process.pid));
}

/** What a forward needs of the supervisor, as it is now. */
function forwardFacts(shell: Shell): ForwardFacts {
  const { run, managers, ownPgid } = shell;
  const { helpers, reaping, spawnedByNode } = shell.parts.children;
  return { run, managers, ownPgid, helpers, reaping, nodeChildren: spawnedByNode };
}
