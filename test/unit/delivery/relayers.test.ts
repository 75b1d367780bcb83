import { describe, expect, it } from 'vitest';
import { isRelayer, Relayers } from '../../../src/engine/delivery/relayers.js';
import { CommandLines } from '../../../src/engine/tree/command-lines.js';
import { FakePlatform } from '../../helpers/fake-platform.js';
import { processKey } from '../../../src/engine/machine/ledger/ledger.js';

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

  it('hands the stop round its relayers as identities; tsx watch is one too', async () => {
    const platform = new FakePlatform();
    const npm = platform.add({ pid: 9, ppid: 1, name: 'npm exec tsx' });
    const watch = platform.add({ pid: 10, ppid: 9, pgid: 9, name: 'node' });
    const app = platform.add({ pid: 11, ppid: 10, pgid: 9, name: 'node' });
    platform.commandLines.set(10, 'node /srv/node_modules/.bin/tsx watch src/index.ts');
    const lines = new CommandLines(platform);
    await lines.learn([npm, watch, app]);
    expect([...new Relayers(lines).keys([npm, watch, app])]).toEqual([processKey(watch)]);
  });
});

describe('which command lines are relayers', () => {
  it.each([
    ['node /srv/node_modules/.bin/tsx src/index.ts', true],
    ['node /srv/node_modules/tsx/dist/cli.mjs watch src/index.ts', true],
    ['/usr/local/bin/node /usr/local/bin/tsx watch app.ts', true],
    // tsx behind node's own options (the options come before the script)
    ['node --max-old-space-size=512 node_modules/.bin/tsx app.ts', true],
    ['node --enable-source-maps --max-old-space-size=512 /srv/node_modules/tsx/dist/cli.mjs app.ts', true],
    // tsx's child: node with tsx's preflight and loader, running the app
    [
      'node --require /srv/node_modules/tsx/dist/preflight.cjs --import file:///srv/node_modules/tsx/dist/loader.mjs app.ts',
      false,
    ],
    // Node's own watch mode; its child is a plain node
    ['node --watch app.js', true],
    ['/usr/bin/node --watch-path=./src --watch-preserve-output app.js', true],
    ['node --watch-preserve-output app.js', false],
    ['/usr/bin/node app.js', false],
    ['node app.js --watch', false], // the app's argument, not node's option
    // nodemon (and its child, a plain node)
    ['node /srv/node_modules/.bin/nodemon app.js', true],
    ['node /usr/lib/node_modules/nodemon/bin/nodemon.js --exec ts-node app.ts', true],
    ['node /srv/app/nodemon-config.js', false],
    // not node
    ['sh -c tsx app.ts', false],
    ['tsx app.ts', false],
  ])('%s: %s', (line, relayer) => {
    expect(isRelayer(line)).toBe(relayer);
  });
});
