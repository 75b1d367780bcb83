import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Children } from '../../../src/engine/children/children.js';
import type { CommandRun } from '../../../src/engine/children/run.js';
import { StopRounds } from '../../../src/engine/delivery/stop-rounds.js';
import type { Effect } from '../../../src/engine/machine/state.js';
import { Pm2Supervision } from '../../../src/engine/pm2/daemons.js';
import { roots } from '../../../src/engine/tree/targets.js';
import { ProcessTree } from '../../../src/engine/tree/tree.js';
import { Logger } from '../../../src/output/log.js';
import { ROOT } from '../../helpers/gsup.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import { waitFor } from '../../helpers/proc.js';

// A stop round carried out: pm2's stop of a God daemon as it happened (pm2 kill, or the signal to it alone when
// its proof no longer holds at the send), and SIGCONT to what pm2 stops only after that.

const GSUP = process.pid;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function godDaemonRound() {
  const home = mkdtempSync(join(tmpdir(), 'gsup-unit-'));
  dirs.push(home);
  writeFileSync(join(home, 'pm2.pid'), '300');
  const platform = new FakePlatform();
  platform.add({ pid: 300, ppid: GSUP, pgid: 300, sid: 300, state: 'T' }); // the God daemon, stopped
  platform.add({ pid: 301, ppid: 300, pgid: 300, sid: 300, state: 'T' }); // its app, stopped
  platform.commandLines.set(300, `PM2 v7.0.4: God Daemon (${home})`);
  const tree = new ProcessTree(platform, GSUP);
  const lines: string[] = [];
  const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line) });
  const env = { PM2_HOME: home, PATH: '' };
  const pm2 = new Pm2Supervision(platform, tree, logger, env, () => true, 'pm2', ROOT, 'tok');
  const children = new Children(platform, logger);
  const rounds = new StopRounds(platform, logger, children, pm2, tree.lines);
  const snapshot = await tree.look();
  const managers = await pm2.find(snapshot);
  const route = { ...pm2.route(roots(snapshot, 'group', 1), snapshot, managers, true), commandPid: undefined };
  const stopped = snapshot.alive;
  const effect: Extract<Effect, { kind: 'stop-round' }> = {
    kind: 'stop-round',
    run: undefined,
    snapshot,
    route: { ...route, relayers: new Set() },
    signal: 'SIGTERM',
    targets: [],
    pm2Kill: route.pm2Kill,
    again: undefined,
    cont: [],
    pm2Cont: stopped,
    held: [],
  };
  const run = { sent: new Set() } as unknown as CommandRun;
  return { home, platform, lines, rounds, effect, run };
}

describe('a stop round with a God daemon stopped through pm2', () => {
  it('its proof gone at the send: the signal to it alone, said so (not "pm2 kill"), then SIGCONT to what it stops', async () => {
    const { home, platform, lines, rounds, effect, run } = await godDaemonRound();
    expect(effect.pm2Kill.map((manager) => manager.info.pid)).toEqual([300]); // planned: pm2 kill
    writeFileSync(join(home, 'pm2.pid'), '999'); // another daemon's now
    rounds.round(effect, run);
    await waitFor(() => lines.some((line) => line.includes('SIGCONT →')), 'the SIGCONT after pm2’s stop');
    expect(platform.kills).toEqual([
      { pid: 300, signal: 'SIGTERM' },
      { pid: 300, signal: 'SIGCONT' },
      { pid: 301, signal: 'SIGCONT' },
    ]);
    const said = lines.join('\n');
    expect(said).toMatch(/pm2 God daemon 300: SIGTERM to it alone, no pm2 kill \(no longer proven gsup's/);
    expect(said).toMatch(/SIGTERM → pm2 God daemon 300, which stops 301/);
    expect(said).not.toContain('(pm2 kill)');
    expect(said).toMatch(/SIGCONT → pid 300, pid 301 \(stopped\)/);
  });
});

describe('the summary printed last (issue 35)', () => {
  it('what a retiring run’s rounds SIGKILLed, before a stop of the whole tree or during it, is named in its summary', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 500, ppid: GSUP, pgid: 500, sid: 500, state: 'S' });
    platform.add({ pid: 501, ppid: 500, pgid: 500, sid: 500, state: 'S' });
    platform.add({ pid: 600, ppid: GSUP, pgid: 600, sid: 600, state: 'S' });
    const tree = new ProcessTree(platform, GSUP);
    const lines: string[] = [];
    const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line) });
    const rounds = new StopRounds(platform, logger, new Children(platform, logger), undefined, tree.lines);
    const snapshot = await tree.look();
    const part = (pid: number) => ({ ...snapshot, alive: snapshot.alive.filter((info) => info.pid === pid) });
    rounds.beginRetire(1, 0);
    rounds.killRound(part(500), 0, 1); // run 1's kill timeout, before the stop
    rounds.begin(1000);
    rounds.saw(snapshot);
    rounds.killRound(part(501), 0, 1); // a round of run 1's, during the stop
    rounds.endRetire(1, { code: null, signal: 'SIGKILL' }, 'reloaded', 2500);
    rounds.end(3000);
    expect(lines.at(-2)).toMatch(/run 1 retired in 2\.50s \(.*\): 0 exited by themselves, 2 killed: 500.*, 501/);
    // The stop's own: 600 exited by itself; 500 and 501 were killed (by run 1's rounds).
    expect(lines.at(-1)).toMatch(/stopped in 2\.00s: 1 exited by themselves, 2 killed: 500.*, 501/);
    expect(rounds.killed).toBe(true);
  });

  it('what a stop’s SIGKILL round reaches of a retiring run is named in that run’s line too', async () => {
    const platform = new FakePlatform();
    platform.add({ pid: 500, ppid: GSUP, pgid: 500, sid: 500, state: 'S' }); // run 1, retiring
    platform.add({ pid: 600, ppid: GSUP, pgid: 600, sid: 600, state: 'S' }); // run 2
    const tree = new ProcessTree(platform, GSUP);
    const lines: string[] = [];
    const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line) });
    const rounds = new StopRounds(platform, logger, new Children(platform, logger), undefined, tree.lines);
    const look = await tree.look();
    const snapshot = {
      ...look,
      runs: new Map([
        [500, 1],
        [600, 2],
      ]),
    };
    rounds.beginRetire(1, 0);
    rounds.begin(500);
    rounds.killRound(snapshot, 0); // the stop's third signal: both trees
    rounds.end(2000);
    rounds.endRetire(1, { code: null, signal: 'SIGKILL' }, 'reloaded', 2000);
    expect(lines.at(-2)).toMatch(/stopped in 1\.50s: 0 exited by themselves, 2 killed: 500.*, 600/);
    expect(lines.at(-1)).toMatch(/run 1 retired in 2\.00s \(.*\): 0 exited by themselves, 1 killed: 500/);
  });
});
