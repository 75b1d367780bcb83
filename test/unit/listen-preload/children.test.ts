import { describe, expect, it } from 'vitest';
import {
  childEnvPairs,
  handOnStdio,
  handOnSyncStdio,
  isPm2Process,
  pairValue,
  runsPm2,
} from '../../../src/listen-preload/children.js';

const FDS = [3, 4, 5]; // two sockets, then the report channel

describe("a child's stdio", () => {
  it.each([
    [undefined, ['pipe', 'pipe', 'pipe', 3, 4, 5]],
    ['pipe', ['pipe', 'pipe', 'pipe', 3, 4, 5]],
    ['inherit', [0, 1, 2, 3, 4, 5]],
    ['ignore', ['ignore', 'ignore', 'ignore', 3, 4, 5]],
    [
      ['ignore', 'inherit'],
      ['ignore', 'inherit', undefined, 3, 4, 5],
    ],
    [
      [0, 1, 2, 'ignore', null, undefined],
      [0, 1, 2, 3, 4, 5],
    ],
    // fork's and tsx's IPC at 3 moves above the sockets: Node tells the child its new place
    [
      [0, 1, 2, 'ipc'],
      [0, 1, 2, 3, 4, 5, 'ipc'],
    ],
    [
      ['pipe', 'pipe', 'pipe', 'ignore', 'ipc'],
      ['pipe', 'pipe', 'pipe', 3, 4, 5, 'ipc'],
    ],
  ])('%j: the fds at 3…', (stdio, expected) => {
    expect(handOnStdio(stdio, FDS)).toEqual(expected);
  });

  it.each([
    [[0, 1, 2, 'pipe']],
    [[0, 1, 2, 3]],
    [[0, 1, 2, { fd: 7 }]],
    [['pipe', 'pipe', 'pipe', 'ipc', 'ipc']],
    [[0, 1, 2, 'ignore', 'inherit']],
    ['bogus'],
  ])('%j asks for fds of its own at 3 and up (or Node refuses it): no socket', (stdio) => {
    expect(handOnStdio(stdio, FDS)).toBeUndefined();
  });

  it("the synchronous forms: Node's own entries, fds 3 and up ignored or absent", () => {
    const head = [
      { type: 'pipe', readable: true },
      { type: 'inherit', fd: 1 },
      { type: 'fd', fd: 2 },
    ];
    const given = [...head, { type: 'fd', fd: 3 }, { type: 'fd', fd: 4 }, { type: 'fd', fd: 5 }];
    expect(handOnSyncStdio(head, FDS)).toEqual(given);
    expect(handOnSyncStdio([...head, { type: 'ignore' }], FDS)).toEqual(given);
    expect(handOnSyncStdio([...head, { type: 'fd', fd: 9 }], FDS)).toBeUndefined();
    expect(handOnSyncStdio([...head, { type: 'pipe' }], FDS)).toBeUndefined();
  });
});

describe("a child's environment", () => {
  const KEYS = ['LISTEN_FDS', 'LISTEN_PID', 'GSUP_REPORT_FD'];
  const handed = { LISTEN_FDS: '1', LISTEN_PID: '100', GSUP_REPORT_FD: '4' };
  const pairs = ['PATH=/bin', 'LISTEN_FDS=1', 'LISTEN_PID=100', 'GSUP_REPORT_FD=4', 'NODE_OPTIONS=--x'];

  it('a child that gets no socket gets none of the variables this process was handed', () => {
    expect(childEnvPairs(pairs, KEYS, handed)).toEqual(['PATH=/bin', 'NODE_OPTIONS=--x']);
  });

  it('a value the app set itself for its child stays', () => {
    expect(childEnvPairs(['LISTEN_FDS=2', 'LISTEN_PID=7'], KEYS, handed)).toEqual(['LISTEN_FDS=2', 'LISTEN_PID=7']);
  });

  it('a child that gets the sockets gets every variable as given, once', () => {
    const given = { ...handed, NODE_OPTIONS: '--x --require "/p"' };
    expect(childEnvPairs(['PATH=/bin', 'LISTEN_PID=7', 'NODE_OPTIONS=--x'], KEYS, handed, given)).toEqual([
      'PATH=/bin',
      'LISTEN_FDS=1',
      'LISTEN_PID=100',
      'GSUP_REPORT_FD=4',
      'NODE_OPTIONS=--x --require "/p"',
    ]);
    expect(pairValue(pairs, 'NODE_OPTIONS')).toBe('--x');
    expect(pairValue(pairs, 'NODE')).toBeUndefined();
  });
});

describe('pm2 commands get no socket', () => {
  it.each([
    [['pm2', 'start', 'app.js', '-i', '2'], true],
    [['/usr/local/bin/pm2-runtime', 'ecosystem.config.js'], true],
    [['/usr/bin/node', '--no-warnings', '/app/node_modules/pm2/bin/pm2', 'reload', 'all'], true],
    [['/bin/sh', '-c', 'pm2 start app.js -i 2 && pm2 logs'], true],
    [['/bin/sh', '-c', 'cd /app; NODE_ENV=production exec npx pm2-runtime start.json'], true],
    [['sh', '-ec', 'node_modules/.bin/pm2 start app.js'], true],
    [['node', 'server.js', '--label', 'pm2'], false],
    [['/bin/sh', '-c', 'node server.js --name pm2'], false],
    [['/bin/sh', '-c', 'tsx app.ts'], false],
    [['npm', 'start'], false],
  ])('%j: %s', (argv, pm2) => {
    expect(runsPm2(argv)).toBe(pm2);
  });

  it('and pm2 itself, under the preload, keeps nothing', () => {
    expect(isPm2Process(['/usr/bin/node', '/usr/lib/node_modules/pm2/bin/pm2', 'start'])).toBe(true);
    expect(isPm2Process(['/usr/bin/node', '/app/node_modules/pm2/lib/Daemon.js'])).toBe(true);
    expect(isPm2Process(['/usr/bin/node', '/app/server.js'])).toBe(false);
  });
});
