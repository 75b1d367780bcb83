// Reaping as PID 1: 10,000 short-lived orphans in a PID namespace of their
// own; the wall time, and the most zombies seen at once.
import { spawn } from 'node:child_process';
import { allProcs } from './lib/proc.js';
import { GSUP, exited } from './lib/spawn.js';
import { seconds, since } from './lib/stats.js';

async function reapAs(command) {
  const script = 'i=0; while [ $i -lt 10000 ]; do (true &); i=$((i+1)); done';
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', ...command, 'sh', '-c', script], {
    stdio: 'ignore',
  });
  const started = process.hrtime.bigint();
  let pid1;
  let most = 0;
  const sampler = setInterval(() => {
    pid1 ??= allProcs().find((proc) => proc.ppid === child.pid)?.pid;
    if (pid1) most = Math.max(most, allProcs().filter((proc) => proc.ppid === pid1 && proc.state === 'Z').length);
  }, 5);
  await exited(child);
  clearInterval(sampler);
  return { took: since(started), most };
}

export default async function reaping({ tools, row }) {
  if (!tools.unshare) return row({ id: 'reaping', skipped: 'unshare not permitted' });
  const said = (result) => `${seconds(result.took)}, ${result.most} zombies at most`;
  const gsup = await reapAs([...GSUP, '--']);
  const anchors = [];
  if (tools.tini) anchors.push(`tini ${said(await reapAs(['tini', '--']))}`);
  if (tools.dumbInit) anchors.push(`dumb-init ${said(await reapAs(['dumb-init']))}`);
  row({ id: 'reaping', result: said(gsup), anchors: anchors.join(', '), measured: { most: gsup.most } });
}
