import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GSUP, PRINTER, ROOT, Run, fixture, gsup, leftovers, tempDir, unshareWorks } from '../helpers/gsup.js';
import { allProcs, isAlive, readProc, waitFor } from '../helpers/proc.js';

const commandLine = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
};

// gsup signals only its own processes, and nothing around it can hang it or make it load foreign code.

const isRoot = process.getuid?.() === 0;

describe('a pm2 God daemon someone else started, after gsup, in the same PM2_HOME', () => {
  it.each([[[]], [['--no-subreaper']]])(
    'gsup %j: never signalled, never waited for, and said so at -v',
    async (flags) => {
      const home = tempDir();
      // A chain (sh, then the app), so the stop's look finds processes that joined: the pm2 look runs.
      const run = gsup(['-v', ...flags, '--', 'sh', '-c', `node ${PRINTER}; exit $?`], {
        env: { PM2_HOME: home.path },
      });
      await run.ready();
      // Another terminal's `pm2 start`: its daemon leads a session of its own, outside gsup's tree.
      // (The padding argument makes room for pm2's title: Linux keeps it within the original argv.)
      const god = new Run('setsid', [process.execPath, fixture('fake-god.js'), '-'.repeat(200)], {
        env: { PM2_HOME: home.path },
      });
      const godPid = await god.ready('god');
      try {
        run.signal('SIGTERM');
        expect([0, 143]).toContain((await run.finished()).code);
        expect(run.count(/^signal: SIGTERM /)).toBe(1);
        god.signal('SIGUSR2'); // a sign of life: any signal gsup sent arrived before it
        await god.waitForLine(/^signal: SIGUSR2 /);
        expect(god.count(/^signal: /), god.transcript()).toBe(1);
        expect(run.stderr.join('\n'), run.transcript()).toContain(
          `pm2 God daemon ${godPid} (PM2_HOME ${home.path}) is not ours`,
        );
      } finally {
        god.child.kill('SIGKILL');
        await god.finished();
        home.remove();
      }
    },
  );
});

describe('a process of the tree that calls itself a pm2 God daemon (its own session, pm2’s title)', () => {
  const cases = [
    ['for a PM2_HOME of its choosing', 'claimed', ''],
    ['for gsup’s PM2_HOME, which has no pid file naming it', 'home', ''],
  ];
  if (isRoot) cases.push(['for gsup’s PM2_HOME, named by its pid file, as nobody', 'home', '--pid-file --uid 65534']);
  it.each(cases)('%s: no run of pm2 (on PATH, in the start dir); one SIGTERM stops it', async (_, which, flags) => {
    const dir = tempDir();
    const record = join(dir.path, 'pm2-runs');
    // A pm2 that writes down each run of it: its arguments and PM2_HOME.
    const fake =
      `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(record)}, ` +
      'JSON.stringify([process.argv.slice(2), process.env.PM2_HOME]) + "\\n");\n';
    const project = join(dir.path, 'project');
    for (const bin of [join(dir.path, 'bin'), join(project, 'node_modules', '.bin')]) {
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, 'pm2'), fake, { mode: 0o755 });
    }
    const home = join(dir.path, 'home');
    const claimed = join(dir.path, which);
    for (const folder of [home, claimed]) mkdirSync(folder, { recursive: true });
    const forged = `node ${fixture('forged-god.js')} --home ${claimed} ${flags} ${'-'.repeat(200)}`;
    const env = { PM2_HOME: home, PATH: `${join(dir.path, 'bin')}:${process.env.PATH}` };
    const run = gsup(['-v', '--', 'sh', '-c', `(setsid ${forged} &); exec node ${PRINTER}`], { cwd: project, env });
    let god: number | undefined;
    try {
      await run.ready();
      god = await run.ready('god');
      expect(readProc(god)?.sid).toBe(god);
      run.signal('SIGTERM');
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.count(new RegExp(`^signal: SIGTERM \\(pid: ${god}, god\\)`))).toBe(1);
      expect(run.count(/^signal: .*god/)).toBe(1);
      expect(existsSync(record) ? readFileSync(record, 'utf8') : 'never run').toBe('never run');
      const log = run.stderr.join('\n');
      expect(log).toMatch(/stopped in \d+ms: 2 exited by themselves, 0 killed/);
      expect(log).toContain(`pid ${god} calls itself a pm2 God daemon but is not proven gsup's`);
      expect(log).not.toContain('pm2 kill');
    } finally {
      if (god !== undefined && commandLine(god).includes('God Daemon')) process.kill(god, 'SIGKILL');
      dir.remove();
    }
  });
});

describe.skipIf(!unshareWorks || !isRoot)('the command’s pid outlives the command (PID namespace, ns_last_pid)', () => {
  it('a stranger that reuses the exited command’s pid and session id is neither signalled nor waited for', async () => {
    const run = new Run(
      'unshare',
      ['--pid', '--fork', '--mount-proc', process.execPath, fixture('reuse-driver.js'), GSUP],
      { namespaced: true },
    );
    await run.finished(20_000);
    const seen = run.stdout.join('\n');
    const [, strangerPid, commandPid] = /^stranger (\d+) command (\d+)$/m.exec(seen) ?? [];
    expect(strangerPid, seen).toBeDefined();
    expect(strangerPid).toBe(commandPid); // the reuse happened
    // gsup stopped what was its own (the daemon) and exited at once: 143 is sh's... no, the daemon's SIGTERM; the command exited 0.
    expect(seen).toMatch(/^gsup exit 0 null$/m);
    expect(seen).not.toContain(`pid ${strangerPid} joined the tree`);
    expect(seen).toMatch(/stopped in \d+ms: 1 exited by themselves, 0 killed/);
    expect(seen).toContain('stranger signals: []');
  });
});

describe('$PM2_HOME/pm2.pid that would block a read', () => {
  it.each([[[]], [['--no-subreaper']]])('a FIFO: gsup %j still stops at SIGTERM', async (flags) => {
    const home = tempDir();
    execFileSync('mkfifo', [join(home.path, 'pm2.pid')]);
    try {
      // A chain: the stop's look finds processes that joined, and looks for pm2 daemons.
      const run = gsup([...flags, '--', 'sh', '-c', `node ${PRINTER}; exit $?`], { env: { PM2_HOME: home.path } });
      await run.ready();
      run.signal('SIGTERM');
      expect([0, 143]).toContain((await run.finished(5000)).code);
      expect(run.count(/^signal: SIGTERM /)).toBe(1);
    } finally {
      home.remove();
    }
  });
});

describe('native code is loaded only from gsup’s package, never through a resolution that walks up', () => {
  const binary = `@koromix/koffi-${process.platform}-${process.arch}`;
  it.skipIf(!existsSync(join(ROOT, 'node_modules', binary)))(
    'a clone whose own binary is missing maps none: not one planted beside it, not one koffi’s resolution finds',
    async () => {
      const dir = tempDir();
      try {
        // A clone in a folder anyone may write to: gsup's files, koffi's loader but not its binary.
        const clone = join(dir.path, 'gsup');
        for (const part of ['bin', 'dist', 'package.json'])
          cpSync(join(ROOT, part), join(clone, part), { recursive: true });
        mkdirSync(join(clone, 'node_modules'));
        symlinkSync(join(ROOT, 'node_modules/koffi'), join(clone, 'node_modules/koffi'));
        const planted = join(dir.path, binary, `${process.platform}_${process.arch}`);
        mkdirSync(planted, { recursive: true });
        copyFileSync(
          join(ROOT, 'node_modules', binary, `${process.platform}_${process.arch}`, 'koffi.node'),
          join(planted, 'koffi.node'),
        );
        const run = new Run(process.execPath, [join(clone, 'bin/gsup.cjs'), '--', 'node', PRINTER]); // as subreaper: koffi is loaded before the spawn
        await run.ready();
        const maps = readFileSync(`/proc/${run.pid}/maps`, 'latin1');
        expect(maps).not.toContain(planted);
        // koffi's own loader, reached through the clone's node_modules/koffi, would find the real one (it resolves from its
        // real path, upwards): gsup never asks it. It runs without koffi, and says so (no subreaper, no pidfds).
        expect(maps).not.toContain(join(ROOT, 'node_modules', binary));
        expect(run.stderr.join('\n'), run.transcript()).toMatch(/koffi could not be loaded \(no koffi binary for /);
        run.signal('SIGTERM');
        expect((await run.finished()).code).toBe(0);
      } finally {
        dir.remove();
      }
    },
  );
});

describe('health probes bounded by their timeout', () => {
  it('a probe that leaves a child holding its output keeps its schedule; what it left is the tree’s and stopped with it', async () => {
    // A duration no other test uses: its processes can be told apart on the machine.
    const probe = 'setsid sleep 31.7 & exit 0';
    const run = gsup([
      '-v',
      '--health-cmd',
      probe,
      '--health-interval',
      '200ms',
      '--health-timeout',
      '500ms',
      '--',
      'node',
      PRINTER,
    ]);
    await run.ready();
    // On a probe that waited for its output to close, the first round would last 31.7 s.
    await waitFor(
      () => run.stderr.filter((line) => line.includes('health check passed')).length >= 4,
      'four rounds',
      5000,
    );
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(leftovers(run)).toEqual([]);
    // Each sleep died with its probe's group (SIGKILL at the probe's exit) or, once it had left it, with the tree.
    await waitFor(
      () => !allProcs().some((proc) => proc.state !== 'Z' && commandLine(proc.pid) === 'sleep 31.7'),
      'no sleep of the probes to be left',
      2000,
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

  it('the command’s parent is in / from its first instruction, and the command in the start directory: 20 runs', async () => {
    const dir = tempDir();
    try {
      for (let i = 0; i < 20; i++) {
        const run = gsup(['--', 'sh', '-c', 'readlink /proc/$PPID/cwd; pwd'], { cwd: dir.path });
        expect(await run.finished()).toEqual({ code: 0, signal: null });
        expect(run.stdout.slice(0, 2)).toEqual(['/', dir.path]);
      }
    } finally {
      dir.remove();
    }
  });
});

describe('a start directory removed before gsup starts (getcwd fails)', () => {
  it('gsup moves to / all the same, and the command starts in /, said once', async () => {
    const dir = tempDir();
    // The shell enters the directory, removes it, then becomes gsup: gsup starts where getcwd fails.
    const line = `cd ${dir.path} && rmdir ${dir.path} && exec ${process.execPath} ${GSUP} -- sh -c 'readlink /proc/$PPID/cwd; pwd'`;
    const run = new Run('sh', ['-c', line]);
    expect(await run.finished()).toEqual({ code: 0, signal: null });
    expect(run.stdout, run.transcript()).toEqual(['/', '/']);
    expect(
      run.stderr.filter((text) =>
        text.includes('the start directory is gone (getcwd: ENOENT): the command starts in /'),
      ),
    ).toHaveLength(1);
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
