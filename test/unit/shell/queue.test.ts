import { describe, expect, it } from 'vitest';
import { EventQueue, type EngineEvent } from '../../../src/engine/shell/queue.js';

// The one serial queue of a supervision: what merges, what goes first, what the loop is told.

describe('EventQueue', () => {
  const stop = (event: EngineEvent) => event.kind === 'signal' && event.signal === 'SIGTERM';

  it('merges a signal that is already waiting, and puts stop signals first', () => {
    let pushes = 0;
    const queue = new EventQueue(stop, () => pushes++);
    for (let index = 0; index < 1000; index++) queue.push({ kind: 'signal', signal: 'SIGUSR1' });
    queue.push({ kind: 'child' });
    queue.push({ kind: 'child' });
    queue.push({ kind: 'signal', signal: 'SIGTERM' });
    expect(queue.length).toBe(3);
    expect(pushes).toBe(3); // merged pushes do not call the loop again
    expect(queue.take()).toEqual({ kind: 'signal', signal: 'SIGTERM' });
    expect(queue.take()).toEqual({ kind: 'signal', signal: 'SIGUSR1' });
    // Once taken, the same signal queues again.
    queue.push({ kind: 'signal', signal: 'SIGUSR1' });
    expect(queue.length).toBe(2);
    expect(queue.take()).toEqual({ kind: 'child' });
    expect(queue.take()).toEqual({ kind: 'signal', signal: 'SIGUSR1' });
    expect(queue.take()).toBeUndefined();
  });

  it('stop signals go first but keep their own order; what carries data (an exit, a look, a fault) never merges', () => {
    const queue = new EventQueue(stop);
    const exit: EngineEvent = { kind: 'command-exit', run: 1, exit: { code: 0, signal: null } };
    queue.push({ kind: 'signal', signal: 'SIGHUP' });
    queue.push(exit);
    queue.push(exit);
    queue.push({ kind: 'fault', error: new Error('one') });
    queue.push({ kind: 'fault', error: new Error('two') });
    queue.push({ kind: 'signal', signal: 'SIGTERM' });
    queue.push({ kind: 'stop', signal: 'SIGTERM', reason: 'asked' });
    expect(queue.length).toBe(7);
    const taken: string[] = [];
    for (let event = queue.take(); event; event = queue.take())
      taken.push(event.kind === 'signal' ? event.signal : event.kind);
    // SIGTERM is the only urgent one here (the test's rule): first; the rest as they came.
    expect(taken).toEqual(['SIGTERM', 'SIGHUP', 'command-exit', 'command-exit', 'fault', 'fault', 'stop']);
  });

  it('urgent events line up behind the urgent ones already waiting, before the rest', () => {
    const urgent = (event: EngineEvent) => event.kind === 'stop' || event.kind === 'command-exit';
    const queue = new EventQueue(urgent);
    queue.push({ kind: 'child' });
    queue.push({ kind: 'stop', signal: 'SIGTERM', reason: 'first' });
    queue.push({ kind: 'timer', name: 'check' });
    queue.push({ kind: 'command-exit', run: 1, exit: { code: 3, signal: null } });
    const order = [queue.take(), queue.take(), queue.take(), queue.take()].map((event) => event?.kind);
    expect(order).toEqual(['stop', 'command-exit', 'child', 'timer']);
  });

  it('a timer merges with a waiting twin of the same name only; the signals waiting are listed in order', () => {
    let pushes = 0;
    const queue = new EventQueue(
      () => false,
      () => pushes++,
    );
    queue.push({ kind: 'timer', name: 'check' });
    queue.push({ kind: 'timer', name: 'check' });
    queue.push({ kind: 'timer', name: 'kill-timeout' });
    queue.push({ kind: 'signal', signal: 'SIGHUP' });
    queue.push({ kind: 'child' });
    queue.push({ kind: 'signal', signal: 'SIGINT' });
    queue.push({ kind: 'signal', signal: 'SIGHUP' });
    expect(queue.length).toBe(5);
    expect(pushes).toBe(5);
    expect(queue.signals()).toEqual(['SIGHUP', 'SIGINT']);
  });
});
