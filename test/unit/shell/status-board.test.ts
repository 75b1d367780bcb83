import { describe, expect, it } from 'vitest';
import { StatusBoard } from '../../../src/engine/shell/status-board.js';

// What /metrics shows of the held sockets (--listen): each one's queue, by name, as the kernel counts it.

describe('StatusBoard: gsup_listen_queue', () => {
  it('absent without --listen', () => {
    expect(new StatusBoard().metrics()).not.toContain('gsup_listen_queue');
  });

  it('a gauge per held socket, its name a label (escaped as the text format asks)', () => {
    const board = new StatusBoard();
    board.listenQueue = () => [
      ['web', 5],
      ['a"b\\c', 0],
    ];
    expect(board.metrics()).toContain(
      '# HELP gsup_listen_queue Connections waiting to be accepted on each held socket (--listen), from the kernel.\n' +
        '# TYPE gsup_listen_queue gauge\n' +
        'gsup_listen_queue{name="web"} 5\n' +
        'gsup_listen_queue{name="a\\"b\\\\c"} 0\n',
    );
  });
});
