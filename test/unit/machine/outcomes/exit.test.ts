import { describe, expect, it } from 'vitest';
import { exitStatus } from '../../../../src/engine/machine/outcomes/exit-status.js';
import { onExitAction } from '../../../../src/engine/machine/stop/on-exit.js';
import { signalNumber } from '../../../../src/platform/signals.js';

describe('exitStatus', () => {
  it('maps codes, signals, spawn errors and success codes', () => {
    expect(exitStatus({ code: 3, signal: null }, [], signalNumber)).toBe(3);
    expect(exitStatus({ code: null, signal: 'SIGTERM' }, [], signalNumber)).toBe(143);
    expect(exitStatus({ code: null, signal: 'SIGKILL' }, [], signalNumber)).toBe(137);
    expect(exitStatus({ code: null, signal: null, errorCode: 'ENOENT' }, [], signalNumber)).toBe(127);
    expect(exitStatus({ code: null, signal: null, errorCode: 'EACCES' }, [], signalNumber)).toBe(126);
    expect(exitStatus({ code: null, signal: null, errorCode: 'EMFILE' }, [], signalNumber)).toBe(125);
    expect(exitStatus({ code: 3, signal: null }, [3], signalNumber)).toBe(0);
    expect(exitStatus({ code: null, signal: 'SIGTERM' }, [143], signalNumber)).toBe(0);
  });

  it('a signal with no name here (a real-time one) by its number: 128+N, as a shell and tini say it', () => {
    expect(exitStatus({ code: null, signal: null, signo: 36 }, [], signalNumber)).toBe(164);
    expect(exitStatus({ code: null, signal: null, signo: 64 }, [], signalNumber)).toBe(192);
    expect(exitStatus({ code: null, signal: null, signo: 36 }, [164], signalNumber)).toBe(0);
  });
});

describe('onExitAction', () => {
  const left = (pgid: number) => [{ pid: 5, ppid: 1, pgid, sid: pgid, state: 'S', startTime: 1, name: 'x' }];
  it('auto: stops what is left in the group, waits for daemons after exit 0', () => {
    expect(onExitAction('auto', 0, [], 10)).toBe('exit');
    expect(onExitAction('auto', 0, left(10), 10)).toBe('stop');
    expect(onExitAction('auto', 0, left(11), 10)).toBe('wait');
    expect(onExitAction('auto', 1, left(11), 10)).toBe('stop');
    expect(onExitAction('stop', 0, left(11), 10)).toBe('stop');
    expect(onExitAction('wait', 1, left(10), 10)).toBe('wait');
    expect(onExitAction('exit', 1, left(10), 10)).toBe('exit');
  });
});
