import { describe, expect, it } from 'vitest';
import { ReadyListeners } from '../../../src/engine/health/ready-listeners.js';
import { Logger } from '../../../src/output/log.js';
import type { NotifySocket, Platform } from '../../../src/platform/index.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

// Where the app's word is heard: a NOTIFY_SOCKET of its own per run, so that a word counts for the run that said
// it (two runs may live at once); a retired run's socket closed.

function listeners() {
  const platform: FakePlatform & Pick<Platform, 'openNotifySocket'> = new FakePlatform();
  const sockets: Array<{ path: string; send: (text: string) => void; closed: boolean }> = [];
  platform.openNotifySocket = (heard) => {
    const socket = { path: `/tmp/notify-${sockets.length + 1}`, send: heard, closed: false };
    sockets.push(socket);
    return { path: socket.path, close: () => void (socket.closed = true) } satisfies NotifySocket;
  };
  const words: string[] = [];
  const silent = new Logger({ verbosity: -1, write: () => {} });
  const ready = new ReadyListeners('sh', platform, silent, (run, word) => words.push(`${run} ${word}`));
  return { ready, sockets, words, platform };
}

describe('ReadyListeners', () => {
  it('each run gets a NOTIFY_SOCKET of its own; a word counts for that run, whichever started last', () => {
    const { ready, sockets, words } = listeners();
    expect(ready.started(1, { A: '1' }).env).toEqual({ A: '1', NOTIFY_SOCKET: '/tmp/notify-1' });
    expect(ready.started(2, {}).env).toEqual({ NOTIFY_SOCKET: '/tmp/notify-2' });
    sockets[0].send('READY=1');
    sockets[1].send('STATUS=busy\nSTOPPING=1');
    expect(words).toEqual(['1 ready', '2 stopping']);
  });

  it('a retired run: its socket closed; the end closes the rest', () => {
    const { ready, sockets } = listeners();
    ready.started(1, {});
    ready.started(2, {});
    ready.retire(1);
    expect(sockets.map((socket) => socket.closed)).toEqual([true, false]);
    ready.close();
    expect(sockets.map((socket) => socket.closed)).toEqual([true, true]);
  });

  it("a later run's socket that cannot be had (EMFILE) throws: that run could not be prepared (issue 35, part 3)", () => {
    const { ready, platform } = listeners();
    platform.openNotifySocket = () => 'socket(AF_UNIX, SOCK_DGRAM) failed (errno 24)';
    expect(() => ready.started(2, {})).toThrow('no NOTIFY_SOCKET for run 2: socket(AF_UNIX, SOCK_DGRAM) failed');
  });
});
