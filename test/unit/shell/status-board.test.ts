import { describe, expect, it } from 'vitest';
import { StatusBoard } from '../../../src/engine/shell/status-board.js';
import { initialState, type State } from '../../../src/engine/machine/step.js';

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

describe('StatusBoard: reloads', () => {
  const running = (runs: number, reloads: Partial<State['tally']['reloads']>): State => {
    const tally = initialState().tally;
    return {
      phase: 'running',
      tally: { ...tally, runs, reloads: { ...tally.reloads, ...reloads } },
      run: { id: runs, startedAt: 0, app: 'ready' },
    };
  };

  it('gsup_reloads_total by result, under --reload-signal only; a reload’s run is no restart', () => {
    expect(new StatusBoard().metrics()).not.toContain('gsup_reloads_total');
    const board = new StatusBoard();
    board.reloads = { ok: 0, failed: 0, killed: 0 };
    // Four runs: the first, two reloads (one whose old run exited first: a restart), one restart.
    board.observe(running(4, { ok: 1, failed: 0, killed: 1, runs: 1 }), undefined, true);
    const text = board.metrics();
    expect(text).toContain('gsup_restarts_total 2\n');
    expect(text).toContain(
      '# TYPE gsup_reloads_total counter\n' +
        'gsup_reloads_total{result="ok"} 1\n' +
        'gsup_reloads_total{result="killed"} 1\n' +
        'gsup_reloads_total{result="failed"} 0\n',
    );
  });
});
