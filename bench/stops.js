// Stop at scale: gsup -t 1s over N processes that ignore SIGTERM, against the
// kernel's own time to kill the same tree; gsup's peak RSS meanwhile; and what
// one look at a tree of 1,000 processes costs, against the floor (a raw read
// of every /proc/PID/stat) and a `ps` spawn, which gsup avoids.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, readdirSync } from 'node:fs';
import { allProcs, descendants, isAlive, statusMiB } from './lib/proc.js';
import { GSUP, exited, lineWhere, sleep } from './lib/spawn.js';
import { mib, ms, since, timed, timedAsync } from './lib/stats.js';

const scaleScript = (count) =>
  `trap '' TERM; i=0; while [ $i -lt ${count} ]; do sleep 600 & i=$((i+1)); done; echo ready; wait`;

async function grown(root, count) {
  let tree = descendants(root);
  while (tree.length < count) {
    await sleep(20);
    tree = descendants(root);
  }
  return tree;
}

const killAll = (procs) => {
  for (const proc of procs) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
};

/**
 * The kernel's own time to kill the same tree, in the same run (the anchor of
 * the budget): the script in a group of its own, then killpg(SIGKILL) until
 * no process of it is alive.
 */
async function kernelKillMs(count) {
  const child = spawn('sh', ['-c', scaleScript(count)], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  const killGroup = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
      return true;
    } catch {
      return false; // no process left in the group
    }
  };
  try {
    await lineWhere(child, (line) => line === 'ready');
    await grown(child.pid, count);
    const members = () => allProcs().filter((proc) => proc.state !== 'Z' && proc.pgid === child.pid).length;
    const sent = process.hrtime.bigint();
    while (killGroup() && members() > 0);
    const took = since(sent);
    await exited(child);
    return took;
  } finally {
    killGroup();
  }
}

/** The least a /proc look can cost: open, read, close every /proc/PID/stat. */
function rawProcRead() {
  const buffer = Buffer.allocUnsafe(1024);
  return timed(() => {
    for (const entry of readdirSync('/proc')) {
      if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
      try {
        const fd = openSync(`/proc/${entry}/stat`, 'r');
        readSync(fd, buffer, 0, buffer.length, 0);
        closeSync(fd);
      } catch {
        // gone meanwhile
      }
    }
  });
}

/** What one look at gsup's tree costs: the engine's own code, loaded through tsx. */
async function lookCost(gsupPid) {
  const { tsImport } = await import('tsx/esm/api');
  const { ProcessTree } = await tsImport('../src/engine/tree/tree.ts', import.meta.url);
  const { linuxPlatform } = await tsImport('../src/platform/linux/platform.ts', import.meta.url);
  const tree = new ProcessTree(linuxPlatform, gsupPid);
  return timedAsync(() => tree.look());
}

async function stopAtScale(count) {
  const child = spawn(GSUP[0], [GSUP[1], '-q', '-t', '1s', '--', 'sh', '-c', scaleScript(count)], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let tree = [];
  try {
    await lineWhere(child, (line) => line === 'ready');
    tree = await grown(child.pid, count + 1);
    const lookMs = await lookCost(child.pid);
    const rawMs = rawProcRead();
    const psMs = timed(() => spawnSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='], { stdio: 'ignore' }));
    const hwm = () => statusMiB(child.pid, 'VmHWM') || 0;
    let peak = hwm();
    const sampler = setInterval(() => (peak = Math.max(peak, hwm())), 10);
    const sent = process.hrtime.bigint();
    child.kill('SIGTERM');
    await exited(child);
    const took = since(sent);
    clearInterval(sampler);
    const survivors = tree.filter((proc) => isAlive(proc.pid)).length;
    return { took, survivors, peak, lookMs, rawMs, psMs };
  } finally {
    child.kill('SIGKILL');
    killAll(tree);
  }
}

export default async function stops({ quick, row }) {
  for (const count of quick ? [100, 1000] : [100, 1000, 10000]) {
    const result = await stopAtScale(count);
    const kernelMs = count >= 1000 ? await kernelKillMs(count) : undefined;
    const survived = `${ms(result.took)}, ${result.survivors} survivors`;
    const measured = { tookMs: result.took, survivors: result.survivors, kernelMs };
    if (count !== 1000) {
      const kernel = kernelMs === undefined ? '' : `kernel: killpg SIGKILL until none alive ${ms(kernelMs)}; `;
      row({
        id: `stop-${count}`,
        result: survived,
        anchors: `${kernel}peak RSS ${mib(result.peak)}, one look ${ms(result.lookMs)}`,
        measured,
      });
      continue;
    }
    row({
      id: 'stop-1000',
      result: survived,
      anchors: `kernel: killpg SIGKILL until none alive ${ms(kernelMs)}`,
      measured,
    });
    row({ id: 'stop-peak-rss', result: mib(result.peak), measured: { peakMiB: result.peak } });
    row({
      id: 'scan',
      result: ms(result.lookMs),
      anchors: `raw read of every /proc/PID/stat ${ms(result.rawMs)}, \`ps -A\` ${ms(result.psMs)}`,
      measured: { rawRatio: result.lookMs / result.rawMs, scanMs: result.lookMs, psMs: result.psMs },
    });
  }
}
