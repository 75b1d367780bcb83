// Start-up: `gsup -- true` against `node -e 0`, wall time from spawn to exit.
// Runs interleaved (A B C A B C ...), so a noisy machine slows all alike.
// With --listen, a Node command: `gsup --listen PORT -- node -e 0` less the command's own `node -e 0` is
// what gsup adds (binding the socket, the preload's file and its checks, and the preload in the command's Node), held to
// the same budget; `gsup -- node -e 0` beside it shows what --listen adds.
import { spawnSync } from 'node:child_process';
import { GSUP, fixture } from './lib/spawn.js';
import { median, ms, since } from './lib/stats.js';

export default function startup({ quick, tools, row }) {
  const runs = quick ? 20 : 60;
  // A port of its own: bound and freed once a round (SO_REUSEADDR, no connection ever made).
  const port = String(41000 + (process.pid % 1000));
  // With a preload in NODE_OPTIONS (the app's), gsup starts Node again without it: paid only then.
  const preload = { ...process.env, NODE_OPTIONS: `--require ${fixture('preload.cjs')}` };
  const commands = {
    node: [process.execPath, ['-e', '0']],
    gsup: [GSUP[0], [GSUP[1], '--', 'true']],
    nodePreload: [process.execPath, ['-e', '0'], preload],
    gsupPreload: [GSUP[0], [GSUP[1], '--', 'true'], preload],
    gsupNode: [GSUP[0], [GSUP[1], '--', process.execPath, '-e', '0']],
    gsupListenNode: [GSUP[0], [GSUP[1], '--listen', port, '--', process.execPath, '-e', '0']],
  };
  if (tools.tini) commands.tini = ['tini', ['--', 'true']];
  if (tools.dumbInit) commands.dumbInit = ['dumb-init', ['true']];
  const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  // The first 3 rounds warm the page cache.
  for (let index = 0; index < runs + 3; index++) {
    for (const [name, [command, args, env]] of Object.entries(commands)) {
      const started = process.hrtime.bigint();
      spawnSync(command, args, { stdio: 'ignore', env });
      if (index >= 3) times[name].push(since(started));
    }
  }
  // Each round's gsup/node pair shares the machine's mood of the moment: the
  // median of the per-round ratios is steadier than a ratio of medians.
  const ratio = (name, base) => median(times[name].map((value, index) => value / times[base][index]));
  // What gsup adds to a Node command, against node -e 0, round by round.
  const added = (name) => times[name].map((value, index) => value - times.node[index]);
  const addedRatio = (name) => median(added(name).map((value, index) => value / times.node[index]));
  const gsup = median(times.gsup);
  const anchors = [`node -e 0 ${ms(median(times.node))}`];
  if (tools.tini) anchors.push(`tini ${ms(median(times.tini))}`);
  if (tools.dumbInit) anchors.push(`dumb-init ${ms(median(times.dumbInit))}`);
  row({
    id: 'startup',
    params: { runs },
    result: `${ms(gsup)} = ${ratio('gsup', 'node').toFixed(2)}× node -e 0`,
    anchors: anchors.join(', '),
    measured: { ratio: ratio('gsup', 'node') },
  });
  const preloaded = ratio('gsupPreload', 'nodePreload');
  row({
    id: 'startup-preload',
    result: `${ms(median(times.gsupPreload))} = ${preloaded.toFixed(2)}× node -e 0 with the same preload`,
    anchors: `node -e 0 with it ${ms(median(times.nodePreload))}`,
    measured: { ratio: preloaded },
  });
  row({
    id: 'startup-listen',
    params: { runs },
    result: `${ms(median(added('gsupListenNode')))} = ${addedRatio('gsupListenNode').toFixed(2)}× node -e 0`,
    anchors:
      `in all ${ms(median(times.gsupListenNode))}; without --listen: ${ms(median(added('gsupNode')))} = ` +
      `${addedRatio('gsupNode').toFixed(2)}× node -e 0`,
    measured: { ratio: addedRatio('gsupListenNode') },
  });
}
