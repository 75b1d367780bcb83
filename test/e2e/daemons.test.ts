import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Run, fixture, gsup, leftovers, markerPath } from '../helpers/gsup.js';
import { isAlive, readProc, waitFor } from '../helpers/proc.js';

const DAEMONIZE = fixture('daemonize.js');

describe('subreaper (Linux, not PID 1)', () => {
  it('keeps a double-forked daemon in the tree: it gets SIGTERM once and gsup waits for it', async () => {
    const done = markerPath();
    const run = gsup(['--', 'node', DAEMONIZE, '--', '--cleanup', '300', '--marker', done]);
    const daemon = await run.ready('daemon');
    await run.ready('daemonize');
    expect(readProc(daemon)?.ppid).toBe(run.pid); // reparented to gsup, not to PID 1
    expect(readProc(daemon)?.sid).toBe(daemon); // in a session of its own
    run.signal('SIGTERM');
    const exit = await run.finished();
    expect(existsSync(done)).toBe(true);
    expect(exit.code).toBe(0);
    expect(run.count(/^signal: SIGTERM .*daemon\)/)).toBe(1);
    expect(isAlive(daemon)).toBe(false);
  });

  it('SIGKILLs a daemon that ignores SIGTERM at the timeout, and names it', async () => {
    const run = gsup(['-t', '1s', '--', 'node', DAEMONIZE, '--', '--ignore-stop']);
    const daemon = await run.ready('daemon');
    await run.ready('daemonize');
    run.signal('SIGTERM');
    await run.finished();
    expect(run.count(/^signal: SIGTERM .*daemon\)/)).toBe(1);
    expect(run.stderr.join('\n')).toMatch(
      new RegExp(`1 killed: ${daemon} \\(\\S*node .*printer\\.js --label daemon --ignore-stop\\)`),
    );
    expect(isAlive(daemon)).toBe(false);
  });

  it.each([
    [['--no-subreaper'], {}],
    [[], { GSUP_SUBREAPER: '0' }],
  ])('%j %j: the daemon goes to PID 1 instead', async (args, env) => {
    const run = gsup([...args, '--', 'node', DAEMONIZE], { env });
    const daemon = await run.ready('daemon');
    await run.ready('daemonize');
    expect(readProc(daemon)?.ppid).not.toBe(run.pid);
    // The daemon left the tree by design; the command is stopped, the daemon ended by the test.
    run.signal('SIGTERM');
    await run.finished();
    process.kill(daemon, 'SIGKILL');
    await waitFor(() => !isAlive(daemon), 'the daemon to be gone');
  });
});

describe('processes that left the process group', () => {
  it('a group whose parent lives is that parent’s: it gets no forwarded signal, and the stop once it is orphaned', async () => {
    // The spawner stays in the command's group; its child runs setsid. The
    // spawner exits at once on SIGTERM without stopping its child.
    const run = gsup(['-v', '--', 'node', fixture('spawner.js'), '--setsid']);
    const child = await run.ready('child0');
    const spawner = await run.ready('spawner');
    expect(readProc(child)?.pgid).toBe(child);
    run.signal('SIGUSR2');
    await run.waitForLine(/^signal: SIGUSR2 .*spawner/);
    await run.waitForLine(new RegExp(`\\] SIGUSR2 → group ${spawner}$`), { stream: 'stderr' });
    run.signal('SIGTERM');
    await run.finished();
    expect(run.count(/^signal: SIGUSR2 .*child0/)).toBe(0);
    expect(run.count(/^signal: SIGUSR2 .*spawner/)).toBe(1);
    // Orphaned by the spawner's exit, the child's group became a root: the stop reached it once.
    expect(run.count(/^signal: SIGTERM .*child0/)).toBe(1);
    expect(run.count(/^clean exit .*child0/)).toBe(1);
    expect(isAlive(child)).toBe(false);
    expect(leftovers(run)).toEqual([]);
  });

  it('an escaped group that was orphaned before the signal is a root: it gets the signal once', async () => {
    // SIGWINCH: the daemonizing command ignores it (its default), the daemon prints it.
    const run = gsup(['-v', '--', 'node', DAEMONIZE]);
    const daemon = await run.ready('daemon');
    await run.ready('daemonize');
    run.signal('SIGWINCH');
    await run.waitForLine(/^signal: SIGWINCH .*daemon\)/);
    run.signal('SIGTERM');
    await run.finished();
    expect(run.count(/^signal: SIGWINCH .*daemon\)/)).toBe(1);
    expect(run.count(/^signal: SIGTERM .*daemon\)/)).toBe(1);
    expect(isAlive(daemon)).toBe(false);
  });
});

describe('--on-exit auto with daemons', () => {
  it('exit 0 leaving only daemons: gsup stays, forwards to them, exits with their status', async () => {
    const run = gsup(['-v', '--', 'node', DAEMONIZE, '--then', 'exit:0']);
    const daemon = await run.ready('daemon');
    await run.waitForLine(/waiting for 1 remaining process/, { stream: 'stderr' });
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 .*daemon\)/);
    expect(readProc(daemon)?.ppid).toBe(run.pid);
    // The daemon dies of SIGKILL behind gsup's back: gsup reaps it and says so.
    process.kill(daemon, 'SIGKILL');
    const exit = await run.finished();
    expect(exit.code, run.transcript()).toBe(137);
    expect(run.count(/^signal: SIGUSR1 .*daemon\)/)).toBe(1);
  });

  it('exit 0 leaving only daemons, then SIGTERM: they get it once, gsup exits 0', async () => {
    const run = gsup(['--', 'node', DAEMONIZE, '--then', 'exit:0', '--', '--cleanup', '200']);
    await run.ready('daemon');
    await run.waitForLine(/waiting for 1 remaining process/, { stream: 'stderr' });
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGTERM .*daemon\)/)).toBe(1);
    expect(run.count(/^clean exit .*daemon\)/)).toBe(1);
  });

  it('non-zero exit: the daemons are stopped, and the command’s status wins', async () => {
    const run = gsup(['--', 'node', DAEMONIZE, '--then', 'exit:3']);
    const daemon = await run.ready('daemon');
    expect((await run.finished()).code).toBe(3);
    expect(run.count(/^signal: SIGTERM .*daemon\)/)).toBe(1);
    expect(isAlive(daemon)).toBe(false);
  });
});

describe('foreign processes', () => {
  it.each(['child', 'group', 'tree'])(
    '--target %s: a process that shares gsup’s own group but is not its own is never signalled',
    async (target) => {
      // Both are children of this test worker, so both are in its process group.
      const foreign = new Run(process.execPath, [fixture('printer.js'), '--label', 'foreign']);
      await foreign.ready('foreign');
      const run = gsup(['--target', target, '--', 'node', fixture('printer.js')]);
      await run.ready();
      expect(readProc(foreign.pid)?.pgid).toBe(readProc(run.pid)?.pgid);
      run.signal('SIGUSR1');
      await run.waitForLine(/^signal: SIGUSR1 /);
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
      expect(foreign.stdout.filter((line) => line.startsWith('signal:'))).toEqual([]);
      expect(isAlive(foreign.pid)).toBe(true);
      foreign.signal('SIGTERM');
      await foreign.finished();
    },
  );
});
