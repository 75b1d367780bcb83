import { describe, expect, it } from 'vitest';
import { SignalIntake } from '../../../src/engine/shell/intake.js';
import { EventQueue } from '../../../src/engine/shell/queue.js';
import type { TargetMode } from '../../../src/engine/tree/targets.js';
import { Logger } from '../../../src/output/log.js';
import type { SignalName } from '../../../src/platform/index.js';
import { raisedOwnSigpipe, takeOwnSigpipe } from '../../../src/platform/sigpipe.js';

// gsup's ears: what a received signal means (stop, forward, nothing), once its own are taken out and the rules applied.

function intakeWith(
  rules: Array<[SignalName, SignalName | null]> = [],
  mode: TargetMode = 'group',
  verbosity = 2,
  reload?: SignalName,
) {
  const lines: string[] = [];
  const logger = new Logger({ verbosity, write: (line) => lines.push(line.trim()) });
  return { intake: new SignalIntake(new Map(rules), mode, logger, reload), lines };
}

describe('SignalIntake', () => {
  it('the reload signal is neither forwarded nor a stop; those that came before the first spawn are taken as nothing', () => {
    const { intake, lines } = intakeWith([], 'group', 2, 'SIGHUP');
    expect(intake.take('SIGHUP')).toEqual({ kind: 'reload', reason: 'SIGHUP received' });
    expect(intake.isStop('SIGHUP')).toBe(false);
    intake.note('SIGHUP', intake.take('SIGHUP'));
    expect(lines).toEqual([]);
    // Held in the queue before the spawn (identical ones merged): told to the machine, then nothing.
    const queue = new EventQueue(() => false);
    queue.push({ kind: 'signal', signal: 'SIGHUP' });
    queue.push({ kind: 'signal', signal: 'SIGUSR1' });
    expect(intake.reloadsBeforeSpawn(queue)).toEqual(['SIGHUP received']);
    expect(intake.take('SIGHUP')).toEqual({ kind: 'none' });
    expect(intake.take('SIGHUP')).toEqual({ kind: 'reload', reason: 'SIGHUP received' });
    // Without --reload-signal it is forwarded as ever.
    expect(intakeWith().intake.take('SIGHUP')).toEqual({ kind: 'forward', signal: 'SIGHUP', suspend: false });
  });

  it('forward first, log after: what a rule made of a signal is said once it is out (note), not when taken', () => {
    const lines: string[] = [];
    const logger = new Logger({ verbosity: 2, write: (line) => lines.push(line) });
    const intake = new SignalIntake(new Map([['SIGHUP', 'SIGUSR1']]), 'group', logger);
    const taken = intake.take('SIGHUP');
    expect(taken).toEqual({ kind: 'forward', signal: 'SIGUSR1', suspend: false });
    expect(lines).toEqual([]);
    intake.note('SIGHUP', taken);
    expect(lines).toEqual(['[gsup] SIGHUP rewritten to SIGUSR1\n']);
  });

  it('SIGTERM and SIGINT stop; any other signal is forwarded as it is', () => {
    const { intake } = intakeWith();
    expect(intake.take('SIGTERM')).toEqual({ kind: 'stop', signal: 'SIGTERM', reason: 'SIGTERM received' });
    expect(intake.take('SIGINT')).toEqual({ kind: 'stop', signal: 'SIGINT', reason: 'SIGINT received' });
    expect(intake.take('SIGUSR2')).toEqual({ kind: 'forward', signal: 'SIGUSR2', suspend: false });
    expect(intake.isStop('SIGTERM')).toBe(true);
    expect(intake.isStop('SIGHUP')).toBe(false);
  });

  it('a rule decides what a signal is: a stop made of another, no stop made of a stop, SIGKILL a stop only for a stop', () => {
    const { intake } = intakeWith([
      ['SIGHUP', 'SIGTERM'],
      ['SIGTERM', 'SIGUSR1'],
      ['SIGINT', 'SIGKILL'],
      ['SIGUSR2', 'SIGKILL'],
    ]);
    expect(intake.take('SIGHUP')).toEqual({ kind: 'stop', signal: 'SIGTERM', reason: 'SIGHUP received' });
    expect(intake.take('SIGTERM')).toEqual({ kind: 'forward', signal: 'SIGUSR1', suspend: false });
    expect(intake.take('SIGINT')).toEqual({ kind: 'stop', signal: 'SIGKILL', reason: 'SIGINT received' });
    expect(intake.take('SIGUSR2')).toEqual({ kind: 'forward', signal: 'SIGKILL', suspend: false });
    expect([intake.isStop('SIGHUP'), intake.isStop('SIGTERM'), intake.isStop('SIGINT')]).toEqual([true, false, true]);
  });

  it('a rule to nothing drops the signal, and says so at -v', () => {
    const { intake, lines } = intakeWith([['SIGWINCH', null]], 'group', 1);
    expect(intake.rewrite('SIGWINCH')).toBeNull();
    expect(intake.take('SIGWINCH')).toEqual({ kind: 'none' });
    expect(lines).toEqual(['[gsup] SIGWINCH received: dropped (rewrite)']);
  });

  it('job control: SIGSTOP for an orphaned group, as it is in child mode, a rule’s signal otherwise; gsup suspends itself every time', () => {
    expect(intakeWith().intake.take('SIGTSTP')).toEqual({ kind: 'forward', signal: 'SIGSTOP', suspend: true });
    expect(intakeWith().intake.take('SIGTTIN')).toEqual({ kind: 'forward', signal: 'SIGSTOP', suspend: true });
    expect(intakeWith([], 'child').intake.take('SIGTTOU')).toEqual({
      kind: 'forward',
      signal: 'SIGTTOU',
      suspend: true,
    });
    const { intake } = intakeWith([
      ['SIGTSTP', 'SIGTERM'],
      ['SIGTTIN', null],
    ]);
    // A rule that makes it a stop signal is no stop (the signal is forwarded), and nothing still suspends gsup.
    expect(intake.take('SIGTSTP')).toEqual({ kind: 'forward', signal: 'SIGTERM', suspend: true });
    expect(intake.isStop('SIGTSTP')).toBe(false);
    expect(intake.take('SIGTTIN')).toEqual({ kind: 'forward', signal: null, suspend: true });
  });

  it('signals gsup caused itself are taken out, each once; a SIGPIPE of its own failed write too', () => {
    const { intake } = intakeWith();
    intake.expectOwn('SIGHUP');
    intake.expectOwn('SIGHUP');
    intake.expectOwn('SIGCONT');
    expect(intake.take('SIGHUP')).toEqual({ kind: 'none' });
    expect(intake.take('SIGCONT')).toEqual({ kind: 'none' });
    expect(intake.take('SIGHUP')).toEqual({ kind: 'none' });
    expect(intake.take('SIGHUP')).toEqual({ kind: 'forward', signal: 'SIGHUP', suspend: false });
    expect(intake.take('SIGCONT')).toEqual({ kind: 'forward', signal: 'SIGCONT', suspend: false });
    raisedOwnSigpipe();
    expect(intake.take('SIGPIPE')).toEqual({ kind: 'none' });
    expect(intake.take('SIGPIPE')).toEqual({ kind: 'forward', signal: 'SIGPIPE', suspend: false });
    expect(takeOwnSigpipe()).toBe(false);
  });

  it('note: nothing to say when the signal went out as it came, for job control, or below -vv', () => {
    const { intake, lines } = intakeWith([
      ['SIGTSTP', 'SIGUSR1'],
      ['SIGHUP', 'SIGUSR2'],
    ]);
    for (const received of ['SIGUSR1', 'SIGTSTP'] as const) intake.note(received, intake.take(received));
    expect(lines).toEqual([]);
    const quiet = intakeWith([['SIGHUP', 'SIGUSR2']], 'group', 1);
    quiet.intake.note('SIGHUP', quiet.intake.take('SIGHUP'));
    expect(quiet.lines).toEqual([]);
  });

  it('a stop asked for by the library: rewritten as a received one, unless the rule drops it or makes it no stop', () => {
    const { intake } = intakeWith([
      ['SIGTERM', 'SIGINT'],
      ['SIGINT', 'SIGUSR1'],
    ]);
    expect(intake.stopRequested('SIGTERM')).toBe('SIGINT');
    expect(intake.stopRequested('SIGINT')).toBe('SIGINT');
    expect(intakeWith([['SIGTERM', null]]).intake.stopRequested('SIGTERM')).toBe('SIGTERM');
  });
});

describe('SignalIntake: a stop signal before the spawn', () => {
  const queueOf = (...signals: SignalName[]) => {
    const queue = new EventQueue(() => false);
    for (const signal of signals) queue.push({ kind: 'signal', signal });
    return queue;
  };

  it('held, or taken by Node’s start-up handler: the first stop signal among them, as the rules make it', () => {
    const { intake } = intakeWith([['SIGHUP', 'SIGINT']]);
    expect(intake.stopBeforeSpawn(undefined, queueOf('SIGUSR1', 'SIGHUP', 'SIGTERM'))).toBe('SIGINT');
    expect(intakeWith().intake.stopBeforeSpawn('SIGINT', queueOf('SIGTERM'))).toBe('SIGINT');
  });

  it('none a stop (-r TERM:USR1): no stop, and the one Node’s handler took joins the held ones for the command', () => {
    const { intake } = intakeWith([['SIGTERM', 'SIGUSR1']]);
    const queue = queueOf('SIGHUP');
    expect(intake.stopBeforeSpawn('SIGTERM', queue)).toBeUndefined();
    expect(queue.signals()).toEqual(['SIGHUP', 'SIGTERM']);
    const nothing = queueOf();
    expect(intake.stopBeforeSpawn(undefined, nothing)).toBeUndefined();
    expect(nothing.length).toBe(0);
  });
});
