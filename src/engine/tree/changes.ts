import type { Logger } from '../../output/log.js';
import { sayJudgment } from './provenance.js';
import type { ProcessTree } from './tree.js';
import type { Snapshot } from '../machine/values.js';

/** At -v: who joined and who left the tree since the last look. */
export function logTreeChanges(logger: Logger, tree: ProcessTree, snapshot: Snapshot): void {
  for (const info of snapshot.joined) {
    const fields = { pid: info.pid, ppid: info.ppid, pgid: info.pgid };
    logger.info('tree-join', `pid ${info.pid} joined the tree (${tree.lines.describe(info)})`, fields);
  }
  for (const judgment of snapshot.judgments ?? []) {
    const { info, ours, why, detail } = judgment;
    const fields = { pid: info.pid, ours, why, detail };
    logger.info(ours ? 'ours' : 'not-ours', sayJudgment(judgment, tree.lines.describe(info)), fields);
  }
  const left = snapshot.left.filter((pid) => !snapshot.leftCommands.includes(pid));
  if (left.length > 0) logger.info('tree-leave', `pid ${left.join(', ')} left the tree`, { pids: left });
}
