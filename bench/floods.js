// Signal floods: N SIGUSR1 as fast as this process can send them, then
// SIGTERM; the time to stop, and how often the SIGTERM got through at all
// (libuv drops a signal when its pipe is full), gsup beside the naive forwarder.
import { spawn } from 'node:child_process';
import { GSUP, NAIVE, exited, fixture, lineWhere, sleep } from './lib/spawn.js';
import { median, ms } from './lib/stats.js';

async function floodOnce(command, count) {
  const child = spawn(command[0], [...command.slice(1), 'node', fixture('printer.js')], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const ready = await lineWhere(child, (line) => line.startsWith('ready'));
  const app = Number(/pid: (\d+)/.exec(ready)[1]);
  const sent = performance.now();
  for (let index = 0; index < count; index++) process.kill(child.pid, 'SIGUSR1');
  process.kill(child.pid, 'SIGTERM');
  const stopped = await Promise.race([exited(child).then(() => true), sleep(3000).then(() => false)]);
  const took = performance.now() - sent;
  if (!stopped) {
    child.kill('SIGKILL');
    await exited(child);
    // The app of a lost stop would be left behind: it leads its own group.
    try {
      process.kill(-app, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return { stopped, took };
}

export default async function floods({ quick, row }) {
  const tries = quick ? 5 : 20;
  const gsup = [...GSUP, '--'];
  const times = { gsup: [], naive: [] };
  for (let index = 0; index < tries; index++) {
    times.gsup.push(await floodOnce(gsup, 2000));
    times.naive.push(await floodOnce(NAIVE, 2000));
  }
  const stopMs = (name) => median(times[name].filter((result) => result.stopped).map((result) => result.took));
  row({
    id: 'flood-stop',
    params: { tries },
    result: `${ms(stopMs('gsup'))} = ${(stopMs('gsup') / stopMs('naive')).toFixed(2)}× naive`,
    anchors: `naive forwarder ${ms(stopMs('naive'))}`,
    measured: { stopMs: stopMs('gsup'), naiveMs: stopMs('naive') },
  });
  const got = { gsup: 0, naive: 0 };
  for (let index = 0; index < tries; index++) {
    if ((await floodOnce(gsup, 30000)).stopped) got.gsup++;
    if ((await floodOnce(NAIVE, 30000)).stopped) got.naive++;
  }
  row({
    id: 'flood-through',
    result: `${got.gsup} of ${tries}`,
    anchors: `naive forwarder ${got.naive} of ${tries}`,
    measured: { got: got.gsup, naiveGot: got.naive },
  });
}
