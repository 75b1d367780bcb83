import { readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRINTER, fixture, gsup, leftovers, tempDir } from '../helpers/gsup.js';
import { isAlive, readProc, waitFor } from '../helpers/proc.js';
import { CTRL_C, CTRL_Z, gsupLine, inPty, ptySkipReason, quote, shellInPty } from '../helpers/pty.js';

// What a person at a terminal (or `docker run -it`) expects, the way
// dumb-init's tests check it: each case once per target mode it applies to.

describe('job control, signalled', () => {
  it.each(['SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const)(
    'group: %s stops the command’s group (as SIGSTOP), then gsup; SIGCONT wakes both',
    async (signal) => {
      const run = gsup(['--', 'node', PRINTER]);
      const pid = await run.ready();
      run.signal(signal);
      // SIGSTOP cannot be caught: the app is stopped without a word.
      await waitFor(() => readProc(pid)?.state === 'T', 'the app to be stopped');
      await waitFor(() => readProc(run.pid)?.state === 'T', 'gsup to be stopped');
      run.signal('SIGCONT');
      await run.waitForLine(/^signal: SIGCONT /);
      await waitFor(() => readProc(run.pid)?.state !== 'T' && readProc(pid)?.state !== 'T', 'both to run again');
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
      expect(run.count(new RegExp(`^signal: ${signal} `))).toBe(0);
      expect(run.count(/^signal: SIGCONT /)).toBe(1);
      expect(leftovers(run)).toEqual([]);
    },
  );

  it.each([
    ['TSTP:USR1', 'SIGUSR1'],
    ['TSTP:HUP', 'SIGHUP'],
  ])(
    'group: -r %s replaces only what the command gets: it gets %s, and gsup still stops itself (dumb-init’s way)',
    async (rule, sent) => {
      const run = gsup(['-r', rule, '--', 'node', PRINTER]);
      await run.ready();
      run.signal('SIGTSTP');
      await run.waitForLine(new RegExp(`^signal: ${sent} `));
      await waitFor(() => readProc(run.pid)?.state === 'T', 'gsup to be stopped');
      run.signal('SIGCONT');
      await run.waitForLine(/^signal: SIGCONT /);
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
      expect(run.count(/^signal: SIGTSTP /)).toBe(0);
      expect(run.count(new RegExp(`^signal: ${sent} `))).toBe(1);
    },
  );

  it.each(['SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const)(
    'child: %s is forwarded as it is, then gsup stops itself; SIGCONT wakes both',
    async (signal) => {
      const run = gsup(['--target', 'child', '--', 'node', PRINTER]);
      await run.ready();
      run.signal(signal);
      await run.waitForLine(new RegExp(`^signal: ${signal} `));
      await waitFor(() => readProc(run.pid)?.state === 'T', 'gsup to be stopped');
      run.signal('SIGCONT');
      await run.waitForLine(/^signal: SIGCONT /);
      await waitFor(() => readProc(run.pid)?.state !== 'T', 'gsup to run again');
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
      expect(run.count(new RegExp(`^signal: ${signal} `))).toBe(1);
      expect(run.count(/^signal: SIGCONT /)).toBe(1);
    },
  );
});

describe.skipIf(ptySkipReason !== undefined)('in a terminal', () => {
  describe.each(['group', 'child'] as const)('--target %s', (mode) => {
    it('Ctrl+Z in an interactive shell stops the app and gsup (the shell says Stopped); fg resumes both', async () => {
      const shell = shellInPty();
      shell.write(`${gsupLine(['--target', mode, '--', 'node', PRINTER, '--default-job-control'])}\n`);
      const pid = await shell.ready();
      const gsupPid = readProc(pid)!.ppid;
      expect(readlinkSync(`/proc/${gsupPid}/exe`)).toBe(process.execPath);
      shell.write(CTRL_Z);
      await shell.waitForLine(/Stopped/);
      await waitFor(
        () => readProc(pid)?.state === 'T' && readProc(gsupPid)?.state === 'T',
        'the app and gsup to be stopped',
      );
      shell.write('fg\n');
      await shell.waitForLine(/^signal: SIGCONT /);
      await waitFor(() => readProc(pid)?.state !== 'T' && readProc(gsupPid)?.state !== 'T', 'both to run again');
      // group: the shell continues gsup alone, which forwards SIGCONT once; child: the app is in
      // gsup's group, so it gets the shell's SIGCONT too.
      if (mode === 'group') expect(shell.count(/^signal: SIGCONT /)).toBe(1);
      shell.write(CTRL_C);
      await shell.waitForLine(/^clean exit /);
      await waitFor(() => !isAlive(gsupPid), 'gsup to exit');
      shell.write('exit\n');
      await shell.finished();
      expect(isAlive(pid)).toBe(false);
    });

    it('gsup leading the terminal’s session (docker run -it): the command has it as its controlling terminal', async () => {
      const script = 'tty; if (exec 3</dev/tty) 2>/dev/null; then echo ctty-ok; else echo ctty-none; fi';
      const run = inPty(`exec ${gsupLine(['--target', mode, '--', 'sh', '-c', script])}`);
      await run.finished();
      expect(run.stdout.join('\n')).toMatch(/^\/dev\/pts\/\d+$/m);
      expect(run.stdout).toContain('ctty-ok');
    });

    it('gsup leading the terminal’s session: an interactive shell as the command has job control', async () => {
      const run = inPty(
        `exec ${gsupLine(['--target', mode, '--', 'bash', '--norc', '--noprofile', '-i', '-c', 'jobs; echo done'])}`,
      );
      expect((await run.finished()).code).toBe(0);
      expect(run.stdout).toContain('done');
      expect(run.stdout.join('\n')).not.toMatch(/no job control|cannot set terminal process group/);
    });
  });

  it('group: giving the terminal up sends gsup SIGHUP and SIGCONT, which go no further; Ctrl+C reaches the app once, from the terminal', async () => {
    const run = inPty(`exec ${gsupLine(['--', 'node', PRINTER])}`);
    const pid = await run.ready();
    expect(readProc(pid)!.sid).toBe(pid); // the app's own session, which has the terminal
    run.write(CTRL_C);
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGINT /)).toBe(1);
    expect(run.count(/^signal: SIGHUP /)).toBe(0);
    expect(run.count(/^signal: SIGCONT /)).toBe(0);
  });

  it('group, no setsid on PATH (a distroless image): gsup’s own exec helper hands the terminal over all the same', async () => {
    // No PATH: every tool by its path, and /proc/self/stat's fields 1 and 6 (pid, session).
    const script =
      '/usr/bin/tty; if (exec 3</dev/tty) 2>/dev/null; then echo ctty-ok; else echo ctty-none; fi; read -r l < /proc/$$/stat; set -- $l; echo "pid $1 sid $6"';
    const run = inPty(`exec ${gsupLine(['--', '/bin/sh', '-c', script])}`, { env: { PATH: '/nonexistent' } });
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toContain('ctty-ok');
    expect(run.stdout.join('\n')).toMatch(/^\/dev\/pts\/\d+$/m);
    const [, pid, sid] = /^pid (\d+) sid (\d+)$/m.exec(run.stdout.join('\n')) ?? [];
    expect(pid).toBeDefined();
    expect(sid).toBe(pid); // the command leads its own session, whose terminal it is
    expect(run.stdout.join('\n')).not.toMatch(/controlling terminal/);
  });

  it('group, gsup’s own exec helper with a preload in NODE_OPTIONS: the helper (a node) does not load it, the command gets it unchanged', async () => {
    const preload = fixture('preload.cjs');
    const script = 'echo "options: $NODE_OPTIONS"; echo "passed: ${GSUP_EXEC_NODE_OPTIONS-none}"';
    const env = { PATH: '/nonexistent', NODE_OPTIONS: `--require ${preload}`, PRELOAD_NO_HANDLER: '1' };
    const run = inPty(`exec ${gsupLine(['--', '/bin/sh', '-c', script])}`, { env });
    expect((await run.finished()).code, run.transcript()).toBe(0);
    expect(run.stdout, run.transcript()).toContain(`options: --require ${preload}`);
    expect(run.stdout).toContain('passed: none');
    // Loaded once: in gsup's first image, which then started again without it; not in the helper.
    expect(run.count(/^preload loaded /), run.transcript()).toBe(1);
  });

  it('group, a setsid on PATH that has no -c (an old busybox): not trusted, gsup’s own exec helper hands the terminal over', async () => {
    const dir = tempDir();
    try {
      // Its usage names no -c, and -c is no option of its.
      const fake =
        '#!/bin/sh\ncase "$1" in\n  --help) echo "Usage: setsid PROG ARGS" >&2; exit 1;;\n  -*) echo "setsid: unrecognized option: $1" >&2; exit 1;;\nesac\nexec /usr/bin/setsid "$@"\n';
      writeFileSync(join(dir.path, 'setsid'), fake, { mode: 0o755 });
      const script =
        'if (exec 3</dev/tty) 2>/dev/null; then echo ctty-ok; else echo ctty-none; fi; read -r l < /proc/$$/stat; set -- $l; echo "pid $1 sid $6"';
      const run = inPty(`exec ${gsupLine(['--', '/bin/sh', '-c', script])}`, {
        env: { PATH: `${dir.path}:${process.env.PATH}` },
      });
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.stdout).toContain('ctty-ok');
      const [, pid, sid] = /^pid (\d+) sid (\d+)$/m.exec(run.stdout.join('\n')) ?? [];
      expect(pid, run.transcript()).toBeDefined();
      expect(sid).toBe(pid);
    } finally {
      dir.remove();
    }
  });

  it.each([
    [
      'no koffi',
      { GSUP_FFI: '0' },
      /the command gets no controlling terminal: koffi could not be loaded \(GSUP_FFI=0\)/,
    ],
  ])('group, %s: one warning, and the command runs without a terminal as before', async (_, env, warning) => {
    const script = 'if (exec 3</dev/tty) 2>/dev/null; then echo ctty-ok; else echo ctty-none; fi';
    const run = inPty(`exec ${gsupLine(['--', '/bin/sh', '-c', script])}`, { env });
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toContain('ctty-none');
    expect(run.stdout.filter((line) => warning.test(line))).toHaveLength(1);
  });

  it('group: gsup as a shell’s job changes nothing (the command’s new session has no terminal, and no warning)', async () => {
    const script = 'if (exec 3</dev/tty) 2>/dev/null; then echo ctty-ok; else echo ctty-none; fi';
    const run = inPty(`bash --norc --noprofile -c ${quote(`${gsupLine(['--', 'sh', '-c', script])}; echo status=$?`)}`);
    await run.finished();
    expect(run.stdout).toContain('ctty-none');
    expect(run.stdout).toContain('status=0');
    expect(run.stdout.join('\n')).not.toMatch(/controlling terminal/);
  });
});

describe('gsup stops itself after job control whatever a rule sends', () => {
  it('-r TSTP:HUP: the app gets SIGHUP, gsup’s state is T', async () => {
    const run = gsup(['-r', 'TSTP:HUP', '--', 'node', PRINTER]);
    await run.ready();
    run.signal('SIGTSTP');
    await run.waitForLine(/^signal: SIGHUP /);
    await waitFor(() => readProc(run.pid)?.state === 'T', 'gsup to be stopped');
    run.signal('SIGCONT');
    await waitFor(() => readProc(run.pid)?.state !== 'T', 'gsup to run again');
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGHUP /)).toBe(1);
    expect(isAlive(run.pid)).toBe(false);
  });
});
