import type { EngineContext } from './context.js';
import { GroupTargets } from './targets.js';

/** A process that had to be SIGKILLed, for the summary. */
export interface KilledProcess {
  pid: number;
  command: string;
  startTime: number;
}

// A process in uninterruptible sleep can outlive SIGKILL for a while; give up
// saying so rather than loop for ever.
const MAX_KILL_MS = 5000;

/**
 * SIGKILL every live process of the tree, again and again until none is left:
 * processes may fork while they are being killed. Whole groups that are ours
 * go first (one kill(2) reaches every member, new forks included), then each
 * process by pid.
 */
export async function killTree(context: EngineContext): Promise<KilledProcess[]> {
  const { platform, logger } = context;
  const killed = new Map<number, KilledProcess>();
  const groups = new GroupTargets(await context.ownPgid());
  const started = Date.now();
  for (let round = 0; ; round++) {
    const snapshot = await context.scan();
    if (snapshot.alive.length === 0) break;
    if (Date.now() - started > MAX_KILL_MS) {
      logger.warn('kill-failed', `still alive after SIGKILL: ${snapshot.alive.map((info) => info.pid).join(', ')}`, {
        pids: snapshot.alive.map((info) => info.pid),
      });
      break;
    }
    for (const info of snapshot.alive) {
      if (!killed.has(info.pid)) {
        killed.set(info.pid, { pid: info.pid, command: platform.commandLine(info.pid), startTime: info.startTime });
      }
    }
    if (!platform.canSignal && platform.killTree) {
      for (const info of snapshot.alive) await platform.killTree(info.pid);
    } else {
      for (const target of groups.select(snapshot)) {
        if (target.kind === 'group') platform.kill(-target.pgid, 'SIGKILL');
      }
      for (const info of snapshot.alive) platform.kill(info.pid, 'SIGKILL');
    }
    await context.wakeup.wait(round < 10 ? 1 : 10, context.abort);
  }
  // Oldest first (the command before what it forked): pids wrap around, start times do not.
  return [...killed.values()].sort((a, b) => a.startTime - b.startTime || a.pid - b.pid);
}
