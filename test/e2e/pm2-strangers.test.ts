import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRINTER, Run, fixture, gsup, tempDir } from '../helpers/gsup.js';
import { commandLine, readProc } from '../helpers/proc.js';

// pm2 God daemons that are not gsup's: someone else's in the same PM2_HOME, one of the tree that only calls itself
// one, and a pid file that would block a read. gsup signals only its own processes, and none of them can hang it.

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
  /**
   * A folder with a `pm2` (on PATH, and in the project's node_modules/.bin) that writes down each run of it
   * (its arguments, PM2_HOME, uid and gid) and, for `kill`, SIGTERMs the pid in $PM2_HOME/pm2.pid, as pm2 would
   * stop its daemon; all of it readable by nobody, the record writable by nobody.
   */
  function fakePm2() {
    const dir = tempDir();
    chmodSync(dir.path, 0o755);
    const runs = join(dir.path, 'runs');
    mkdirSync(runs);
    if (isRoot) chownSync(runs, 65534, 65534);
    const record = join(runs, 'pm2-runs');
    const fake =
      `#!/usr/bin/env node\nconst fs = require('fs');\nconst home = process.env.PM2_HOME;\n` +
      `fs.appendFileSync(${JSON.stringify(record)}, ` +
      'JSON.stringify([process.argv.slice(2), home, process.getuid(), process.getgid()]) + "\\n");\n' +
      "if (process.argv[2] === 'kill') process.kill(Number(fs.readFileSync(home + '/pm2.pid', 'utf8')), 'SIGTERM');\n";
    const project = join(dir.path, 'project');
    for (const bin of [join(dir.path, 'bin'), join(project, 'node_modules', '.bin')]) {
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, 'pm2'), fake, { mode: 0o755 });
    }
    const runsOfPm2 = () =>
      existsSync(record)
        ? readFileSync(record, 'utf8')
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line))
        : [];
    return { dir, project, runsOfPm2, path: `${join(dir.path, 'bin')}:${process.env.PATH}` };
  }

  const cases = [
    ['for a PM2_HOME of its choosing', 'claimed'],
    ['for gsup’s PM2_HOME, which has no pid file naming it', 'home'],
  ];
  it.each(cases)(
    '%s: not proven, no run of pm2 (on PATH, in the start dir); one SIGTERM, to it alone',
    async (_, which) => {
      const { dir, project, runsOfPm2, path } = fakePm2();
      const home = join(dir.path, 'home');
      const claimed = join(dir.path, which);
      for (const folder of [home, claimed]) mkdirSync(folder, { recursive: true });
      const forged = `node ${fixture('forged-god.js')} --home ${claimed} ${'-'.repeat(200)}`;
      const env = { PM2_HOME: home, PATH: path };
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
        expect(runsOfPm2()).toEqual([]);
        const log = run.stderr.join('\n');
        // The count, not the time (over 1 s under load, the duration is said in s; the daemon waits for the command).
        expect(log).toMatch(/stopped in \S+: 2 exited by themselves, 0 killed/);
        expect(log).toContain(`pid ${god} calls itself a pm2 God daemon but is not proven gsup's`);
        expect(log).toContain(`[gsup] pm2 God daemon ${god}: SIGTERM to it alone, no pm2 kill (not proven gsup's: `);
        expect(log).not.toContain('(pm2 kill)');
      } finally {
        if (god !== undefined && commandLine(god).includes('God Daemon')) process.kill(god, 'SIGKILL');
        dir.remove();
      }
    },
  );

  it.skipIf(!isRoot)(
    'for gsup’s PM2_HOME, named by its pid file, as nobody: pm2 kill runs as nobody, never as root',
    async () => {
      const { dir, project, runsOfPm2, path } = fakePm2();
      const home = join(dir.path, 'home');
      mkdirSync(home);
      const forged = `node ${fixture('forged-god.js')} --home ${home} --pid-file --uid 65534 ${'-'.repeat(200)}`;
      const env = { PM2_HOME: home, PATH: path };
      const run = gsup(['--', 'sh', '-c', `(setsid ${forged} &); exec node ${PRINTER}`], { cwd: project, env });
      let god: number | undefined;
      try {
        await run.ready();
        god = await run.ready('god');
        expect(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${god}/status`, 'utf8'))?.[1]).toBe('65534'); // ready: nobody
        run.signal('SIGTERM');
        expect((await run.finished()).code, run.transcript()).toBe(0);
        // Its own uid (setuid: its group is still root's, which is the daemon's own, never more than it has).
        expect(runsOfPm2()).toEqual([[['kill'], home, 65534, 0]]);
        expect(run.count(new RegExp(`^signal: SIGTERM \\(pid: ${god}, god\\)`))).toBe(1); // from that pm2 kill
        expect(run.count(/^signal: .*god/)).toBe(1);
        expect(run.stderr).toContain(
          `[gsup] pm2 God daemon ${god}: pm2 kill (PM2_HOME ${home} from gsup's environment, as uid 65534 gid 0)`,
        );
      } finally {
        if (god !== undefined && commandLine(god).includes('God Daemon')) process.kill(god, 'SIGKILL');
        dir.remove();
      }
    },
  );
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
