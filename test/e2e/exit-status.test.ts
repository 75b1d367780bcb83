import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRINTER, gsup, tempDir } from '../helpers/gsup.js';

describe('the command runs as if started directly', () => {
  it('passes stdin through: echo hi | gsup -- cat', async () => {
    const run = gsup(['--', 'cat'], { stdin: 'hi\n' });
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toEqual(['hi']);
  });

  it('keeps the environment and the working directory', async () => {
    const dir = tempDir();
    try {
      const run = gsup(['--', 'sh', '-c', 'echo "$GSUP_TEST_VALUE"; pwd'], {
        env: { GSUP_TEST_VALUE: 'kept' },
        cwd: dir.path,
      });
      expect((await run.finished()).code).toBe(0);
      expect(run.stdout).toEqual(['kept', dir.path]);
    } finally {
      dir.remove();
    }
  });

  // gsup starts the command without libuv (posix_spawn, where it reaps: src/platform/linux/process/posix-spawn.ts),
  // set up as libuv's child would be.
  it.runIf(process.platform === 'linux')(
    'every signal at its default and none blocked (gsup ignores SIGPIPE, its command does not)',
    async () => {
      const run = gsup(['--', 'grep', '-E', '^Sig(Blk|Ign)', '/proc/self/status']);
      expect((await run.finished()).code).toBe(0);
      expect(run.stdout).toEqual(['SigBlk:\t0000000000000000', 'SigIgn:\t0000000000000000']);
    },
  );

  it.runIf(process.platform === 'linux')(
    'leads a session of its own, with stdio 0-2 open as gsup has them',
    async () => {
      const run = gsup(['--', 'sh', '-c', 'echo $$; cut -d" " -f6 /proc/$$/stat; ls /proc/$$/fd'], { stdin: '' });
      expect((await run.finished()).code).toBe(0);
      const [pid, session, ...fds] = run.stdout;
      expect(session).toBe(pid);
      expect(fds.slice(0, 3)).toEqual(['0', '1', '2']);
    },
  );

  it('a script without #! runs with sh, as execvp runs it', async () => {
    const dir = tempDir();
    try {
      const script = join(dir.path, 'plain-script');
      writeFileSync(script, 'echo "no #! here: $#"\nexit 5\n');
      chmodSync(script, 0o755);
      const run = gsup(['--', script, 'a', 'b']);
      expect((await run.finished()).code).toBe(5);
      expect(run.stdout).toEqual(['no #! here: 2']);
    } finally {
      dir.remove();
    }
  });

  it('leaves the command its own options: gsup sleep-like args after the command are not parsed', async () => {
    const run = gsup(['sh', '-c', 'echo "$@"', 'sh', '-v', '--target', 'x']);
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toEqual(['-v --target x']);
  });
});

describe('exit status', () => {
  it.each([0, 1, 7, 255])('is the command’s exit code %i', async (code) => {
    const run = gsup(['--', 'sh', '-c', `exit ${code}`]);
    expect((await run.finished()).code).toBe(code);
    expect(run.stderr).toEqual([]);
  });

  it.each([
    ['TERM', 143],
    ['KILL', 137],
    ['HUP', 129],
  ])('is 128+N when the command dies of SIG%s', async (signal, status) => {
    const run = gsup(['--', 'sh', '-c', `kill -${signal} $$`]);
    expect((await run.finished()).code).toBe(status);
  });

  // A real-time signal has no name in Node (Node's own child_process reads such a death as exit 0); gsup reaps its
  // command itself (posix_spawn: src/platform/linux/process/posix-spawn.ts) and reads the signal's number.
  it.runIf(process.platform === 'linux')('is 128+N when the command dies of a real-time signal (40): 168', async () => {
    const run = gsup(['-v', '--', 'sh', '-c', 'kill -40 $$']);
    expect((await run.finished()).code).toBe(168);
    expect(run.stderr.filter((line) => /left the tree: the command exited \(signal 40\)$/.test(line))).toHaveLength(1);
  });

  // A wrapper (sh, npm, npx) that dies of the stop signal it passed on says nothing of the app: gsup reaped the app.
  it('sh -c without exec, SIGTERM: the app cleans up and exits 0, sh dies of the SIGTERM: gsup exits 0 (the app’s)', async () => {
    const run = gsup(['--', 'sh', '-c', `node ${PRINTER} --cleanup 300; echo after`]);
    await run.ready();
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(run.count(/^signal: SIGTERM /)).toBe(1);
    expect(run.count(/^clean exit /)).toBe(1);
    expect(run.stdout).not.toContain('after'); // sh died of it: the status is not sh's own
  });

  it('sh -c without exec: an app that exits 3 on SIGTERM gives 3; one gsup had to SIGKILL gives 137', async () => {
    const app = [
      "process.on('SIGTERM', () => (console.log('signal: SIGTERM'), process.exit(3)));",
      "console.log('ready (pid: ' + process.pid + ', app)'); setInterval(() => {}, 1e9)",
    ].join(' ');
    const three = gsup(['--', 'sh', '-c', `node -e "${app}"; true`]);
    await three.ready('app');
    three.signal('SIGTERM');
    expect((await three.finished()).code).toBe(3);
    expect(three.count(/^signal: SIGTERM/)).toBe(1);
    const killed = gsup(['-t', '1s', '--', 'sh', '-c', `node ${PRINTER} --ignore-stop; true`]);
    await killed.ready();
    killed.signal('SIGTERM');
    expect((await killed.finished()).code).toBe(137);
    expect(killed.stderr.join('\n')).toMatch(/1 killed: \d+ \(node /);
  });

  it('sh -c without exec, SIGINT: dash waits for the app, then dies of SIGINT itself: 130 (-e 130 maps it)', async () => {
    for (const [args, status] of [
      [[], 130],
      [['-e', '130'], 0],
    ] as const) {
      const run = gsup([...args, '--', 'sh', '-c', `node ${PRINTER} --cleanup 100; echo after`]);
      await run.ready();
      run.signal('SIGINT');
      expect((await run.finished()).code).toBe(status);
      expect(run.count(/^clean exit /)).toBe(1);
    }
  });

  it('is 127 with one line when the command is not found', async () => {
    const run = gsup(['--', 'gsup-no-such-command']);
    expect((await run.finished()).code).toBe(127);
    expect(run.stderr).toEqual(['gsup: gsup-no-such-command: command not found']);
  });

  it('--log-format json: the spawn error is one JSON line too', async () => {
    const run = gsup(['--log-format', 'json', '--', 'gsup-no-such-command']);
    expect((await run.finished()).code).toBe(127);
    expect(run.stderr).toHaveLength(1);
    expect(JSON.parse(run.stderr[0])).toMatchObject({
      level: 'error',
      event: 'spawn-failed',
      message: 'gsup-no-such-command: command not found',
      command: 'gsup-no-such-command',
      exitCode: 127,
    });
  });

  it('is 126 with one line when the command is not executable', async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'script.sh');
      writeFileSync(file, 'echo never\n');
      chmodSync(file, 0o644);
      const run = gsup(['--', file]);
      expect((await run.finished()).code).toBe(126);
      expect(run.stderr).toEqual([`gsup: ${file}: permission denied (not executable)`]);
    } finally {
      dir.remove();
    }
  });

  it('maps -e codes to 0, from the flag and from GSUP_SUCCESS_EXIT', async () => {
    expect((await gsup(['-e', '3', '--', 'sh', '-c', 'exit 3']).finished()).code).toBe(0);
    expect((await gsup(['-e', '3', '--', 'sh', '-c', 'exit 4']).finished()).code).toBe(4);
    expect((await gsup(['-e', '143', '--', 'sh', '-c', 'kill -TERM $$']).finished()).code).toBe(0);
    expect((await gsup(['--', 'sh', '-c', 'exit 4'], { env: { GSUP_SUCCESS_EXIT: '3,4' } }).finished()).code).toBe(0);
  });

  it('-e 127 maps the 127 of a missing command too (the help: "when gsup would exit with this code"), and still says why', async () => {
    const missing = gsup(['-e', '127', '--', 'no-such-command-gsup']);
    expect((await missing.finished()).code).toBe(0);
    expect(missing.stderr).toEqual(['gsup: no-such-command-gsup: command not found']);
    const help = gsup(['--help']);
    await help.finished();
    expect(help.stdout.join(' ').replace(/\s+/g, ' ')).toContain(
      "exit 0 when gsup would exit with this code (the command's, or 127 for a missing one)",
    );
  });
});

describe('gsup’s own status', () => {
  it('a flood of signals around the command’s end never replaces its status', async () => {
    const run = gsup(['--', 'sh', '-c', 'trap "" USR1; echo ready; sleep 0.3; exit 7']);
    await run.waitForLine(/^ready$/); // gsup's handlers are in: the flood starts with the command
    let sent = 0;
    const flood = setInterval(() => {
      for (let i = 0; i < 100 && run.exit === undefined; i++) if (run.child.kill('SIGUSR1')) sent++;
    }, 1);
    try {
      expect(await run.finished()).toEqual({ code: 7, signal: null });
    } finally {
      clearInterval(flood);
    }
    expect(sent).toBeGreaterThan(100);
  });
});
