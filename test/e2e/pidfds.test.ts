import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { GSUP, Run, fixture, gsup, leftovers, unshareWorks } from '../helpers/gsup.js';
import { waitFor } from '../helpers/proc.js';

// Identities taken while certain: a group only through its leader, gsup's own children through the pidfds taken at
// their spawn, and no window left unsaid.

describe('a group gets a signal through its leader only', () => {
  it('a member that once led another group cannot stand for its group: the signal reaches it, not the group it led', async () => {
    // G: the command's group, whose leader exits; M in G once led group M, where its child C is.
    const run = gsup(['-v', '--on-exit', 'wait', '--', 'node', fixture('regroup.js')]);
    const [, member, child] = (
      await run.waitForLine(/^regrouped \(pid: (\d+), member, once leader of the group of (\d+)\)$/)
    ).map(Number);
    await run.waitForLine(/waiting for 2 remaining process\(es\)/, { stream: 'stderr' });
    run.signal('SIGUSR1');
    await run.waitForLine(new RegExp(`^signal: SIGUSR1 \\(pid: ${member}, member\\)$`));
    run.signal('SIGTERM');
    await run.finished();
    // C's parent M lives: C is M's to signal, and got no SIGUSR1 (any gsup sent came before the SIGTERM it printed).
    expect(run.count(new RegExp(`^signal: SIGTERM \\(pid: ${child}, child\\)$`)), run.transcript()).toBe(1);
    expect(run.count(/^signal: SIGUSR1 /), run.transcript()).toBe(1);
    expect(leftovers(run)).toEqual([]);
    await waitFor(() => leftovers(run).length === 0, 'the tree to be gone');
  });
});

describe('without pidfds, or with their sends refused: said once at start, and every signal still arrives', () => {
  // pidfd_open and pidfd_send_signal: the same numbers on every architecture.
  const PIDFD_OPEN = 434;
  const PIDFD_SEND_SIGNAL = 424;
  // The command, and a daemon its subshell left (reparented to gsup: a root of its own, signalled through its identity).
  const TREE = [
    'sh',
    '-c',
    `(setsid node ${fixture('printer.js')} --label daemon &); exec node ${fixture('printer.js')}`,
  ];

  async function signalsArrive(run: ReturnType<typeof gsup>): Promise<void> {
    await run.ready();
    await run.ready('daemon');
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 \(pid: \d+, printer\)$/);
    await run.waitForLine(/^signal: SIGUSR1 \(pid: \d+, daemon\)$/);
    run.signal('SIGTERM');
    expect((await run.finished()).code, run.transcript()).toBe(0);
    for (const label of ['printer', 'daemon']) {
      for (const signal of ['SIGUSR1', 'SIGTERM'])
        expect(run.count(new RegExp(`^signal: ${signal} \\(pid: \\d+, ${label}\\)$`)), `${signal} ${label}`).toBe(1);
    }
    expect(run.stderr.join('\n')).toMatch(/stopped in .*: 2 exited by themselves, 0 killed/);
  }

  it.each([
    [
      'pidfd_send_signal refused (a seccomp filter): each send falls back to the checked kill(2)',
      [PIDFD_SEND_SIGNAL],
      /no pidfds \(pidfd_send_signal failed \(EPERM\)\)/,
    ],
    [
      'pidfd_open refused (a seccomp filter)',
      [PIDFD_OPEN, PIDFD_SEND_SIGNAL],
      /no pidfds \(pidfd_open failed \(EPERM\)\)/,
    ],
  ])('%s', async (_name, syscalls, warning) => {
    const run = new Run(process.execPath, [
      fixture('seccomp-exec.js'),
      syscalls.join(','),
      process.execPath,
      GSUP,
      '--',
      ...TREE,
    ]);
    await signalsArrive(run);
    expect(
      run.stderr.filter((line) => warning.test(line)),
      run.transcript(),
    ).toHaveLength(1);
  });

  it('no koffi (GSUP_FFI=0): said once, with why', async () => {
    // No subreaper either without koffi: a daemon would leave the tree unseen, so the command alone.
    const run = gsup(['--', 'node', fixture('printer.js')], { env: { GSUP_FFI: '0' } });
    await run.ready();
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 /);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(
      run.stderr.filter((line) =>
        /no pidfds \(koffi could not be loaded \(GSUP_FFI=0\)\): each signal is a kill\(2\)/.test(line),
      ),
    ).toHaveLength(1);
  });
});

describe.skipIf(!unshareWorks || process.getuid?.() !== 0)(
  'a probe’s pid, handed out again (PID namespace, ns_last_pid)',
  () => {
    it('a process of the tree that gets the number of a reaped probe is the tree’s: stopped with it, once', async () => {
      const run = new Run(
        'unshare',
        ['--pid', '--fork', '--mount-proc', process.execPath, fixture('probe-reuse-driver.js'), GSUP],
        { namespaced: true },
      );
      await run.finished(30_000);
      const seen = run.stdout.join('\n');
      const [, child, probe] = /^child (\d+) probe (\d+)$/m.exec(seen) ?? [];
      expect(child, seen).toBeDefined();
      expect(child).toBe(probe); // the reuse happened
      expect(seen).toMatch(/^gsup exit 0 null$/m);
      expect(seen).toContain('child signals: ["SIGTERM"]');
      expect(seen).toContain('child alive at the end: false');
    });
  },
);

describe.skipIf(!unshareWorks || process.getuid?.() !== 0)(
  'without /proc/PID/task/TID/children (hidden here by a mount)',
  () => {
    it('a forward fails open: it looks at the tree, and a daemon reparented to gsup gets the signal too', async () => {
      // gsup in a mount namespace of its own (unshare execs it: same pid), so the mount over its task folder is its alone.
      const tree = `(setsid node ${fixture('printer.js')} --label daemon &); exec node ${fixture('printer.js')}`;
      const run = new Run('unshare', [
        '--mount',
        '--propagation',
        'private',
        process.execPath,
        GSUP,
        '--',
        'sh',
        '-c',
        tree,
      ]);
      await run.ready();
      await run.ready('daemon');
      execFileSync('nsenter', ['-t', String(run.pid), '-m', 'mount', '-t', 'tmpfs', 'none', `/proc/${run.pid}/task`]);
      run.signal('SIGUSR1');
      await run.waitForLine(/^signal: SIGUSR1 \(pid: \d+, printer\)$/);
      await run.waitForLine(/^signal: SIGUSR1 \(pid: \d+, daemon\)$/);
      run.signal('SIGTERM');
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.count(/^signal: SIGUSR1 /)).toBe(2);
      expect(run.count(/^signal: SIGTERM /)).toBe(2);
    });
  },
);
