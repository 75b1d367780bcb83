import { describe, expect, it } from 'vitest';
import { deliver } from '../../../src/engine/delivery/deliver.js';
import { Relayers } from '../../../src/engine/delivery/relayers.js';
import { CommandLines } from '../../../src/engine/tree/command-lines.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import type { Target } from '../../../src/engine/machine/ledger.js';

describe('relayers', () => {
  it('recognises tsx by its command line, read ahead once per process; one not read yet is none', async () => {
    const platform = new FakePlatform();
    const tsx = platform.add({ pid: 10, ppid: 1, name: 'node' });
    const app = platform.add({ pid: 11, ppid: 10, name: 'node' });
    const shell = platform.add({ pid: 12, ppid: 10, name: 'sh' }); // not node: its command line is not even asked for
    platform.commandLines.set(10, 'node /srv/node_modules/.bin/tsx src/index.ts');
    platform.commandLines.set(11, 'node --require /srv/node_modules/tsx/dist/preflight.cjs src/index.ts');
    platform.commandLines.set(12, 'node /srv/node_modules/.bin/tsx never-read.ts');
    const lines = new CommandLines(platform);
    const relayers = new Relayers(lines);
    expect(relayers.find([tsx, app, shell])).toEqual([]); // nothing read yet
    await lines.learn([tsx, app, shell]);
    expect(relayers.find([tsx, app, shell])).toEqual([tsx]);
    platform.commandLines.set(10, 'changed: the line is kept for the same process');
    await lines.learn([tsx, app]);
    expect(relayers.find([tsx, app])).toEqual([tsx]);
  });

  it('a stop signal skips tsx when its child gets it too (the child gets it once, tsx relays nothing); alone, tsx gets it', async () => {
    const platform = new FakePlatform();
    const npm = platform.add({ pid: 9, ppid: 1, name: 'npm exec tsx' });
    const tsx = platform.add({ pid: 10, ppid: 9, pgid: 9, name: 'node' });
    const app = platform.add({ pid: 11, ppid: 10, pgid: 9, name: 'node' });
    platform.commandLines.set(10, 'node /srv/node_modules/.bin/tsx src/index.ts');
    const lines = new CommandLines(platform);
    await lines.learn([npm, tsx, app]);
    const group: Target = { kind: 'group', pgid: 9, members: [npm, tsx, app] };
    deliver(platform, [group], 'SIGTERM', new Relayers(lines));
    expect(platform.kills).toEqual([
      { pid: 9, signal: 'SIGTERM' },
      { pid: 11, signal: 'SIGTERM' },
    ]);
    platform.kills.length = 0;
    deliver(platform, [group], 'SIGUSR2', new Relayers(lines)); // not a stop signal: the group, as a terminal sends it
    expect(platform.kills).toEqual([{ pid: -9, signal: 'SIGUSR2' }]);
    platform.kills.length = 0;
    deliver(platform, [{ kind: 'process', process: tsx }], 'SIGTERM', new Relayers(lines)); // its child is elsewhere: tsx relays
    expect(platform.kills).toEqual([{ pid: 10, signal: 'SIGTERM' }]);
  });
});
