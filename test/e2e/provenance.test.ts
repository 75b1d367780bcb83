import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  GSUP,
  PRINTER,
  Run,
  fixture,
  gsupAsPid1,
  hostPidOfPid1,
  nsenterWorks,
  tempDir,
  unshareWorks,
} from '../helpers/gsup.js';
import { CAP_SYS_PTRACE, DROP, capEff, dropWorks, gsupAsPid1WithDockerCaps } from '../helpers/caps.js';
import { forAnyone } from '../helpers/anyone.js';
import { allProcs, commandLine, waitFor } from '../helpers/proc.js';
import { freePort, status } from '../helpers/net.js';

// As PID 1 with Docker's default capabilities (no CAP_SYS_PTRACE), root cannot read the environment of
// another user's process: an app that drops privileges (gosu, su-exec, setpriv) leaves daemons whose
// run mark gsup cannot read. The tree wins: such an orphan is the tree's unless gsup can show it is not.

if (!dropWorks) console.warn('skipping: needs root, `unshare --pid --fork --mount-proc` and setpriv');

async function pid1(run: Run): Promise<number> {
  let pid: number | undefined;
  await waitFor(() => (pid = hostPidOfPid1(run)) !== undefined, 'gsup to start under unshare');
  return pid!;
}

describe.skipIf(!dropWorks)('PID 1 with Docker’s capabilities, the command dropping to uid 65534', () => {
  it('a setsid daemon it leaves (its mark unreadable): gsup stays after the command exits 0, and the daemon gets exactly one SIGTERM at the stop', async () => {
    const dir = forAnyone({ fixtures: ['daemonize.js', 'printer.js'] });
    try {
      const daemonize = [process.execPath, dir.fixture('daemonize.js'), '--then', 'exit:0', '--', '--cleanup', '100'];
      const run = gsupAsPid1WithDockerCaps(['-v', '--', ...DROP, ...daemonize]);
      await run.ready('daemon');
      const gsupPid = await pid1(run);
      // What the test claims to set up: gsup itself lacks CAP_SYS_PTRACE.
      expect(capEff(gsupPid) & (1n << BigInt(CAP_SYS_PTRACE))).toBe(0n);
      await run.waitForLine(/is the tree's: reparented to gsup, its mark cannot be read \(EACCES/, {
        stream: 'stderr',
      });
      await run.waitForLine(/command exited \(code 0\); waiting for 1 remaining process/, { stream: 'stderr' });
      expect(run.exit).toBeUndefined();
      expect(run.count(/^signal: /)).toBe(0);
      process.kill(gsupPid, 'SIGTERM');
      const exit = await run.finished();
      expect(exit.code, run.transcript()).toBe(0); // the daemon's own status: gsup stayed for it
      expect(run.count(/^signal: SIGTERM .*daemon\)$/), run.transcript()).toBe(1);
      expect(run.count(/^clean exit .*daemon\)$/), run.transcript()).toBe(1);
    } finally {
      dir.remove();
    }
  });
});

// A daemon that sets its title by writing over its argv (perl's $0, as nginx, php-fpm, redis and setproctitle do)
// writes over its environment too: its mark cannot be read there, which is no proof of a stranger.
const TITLED =
  'use POSIX; exit if fork; POSIX::setsid(); exit if fork; $0 = "mydaemon: master process"; $| = 1; ' +
  '$SIG{TERM} = sub { print "signal: SIGTERM (pid: $$, daemon)\\n"; exit 0 }; ' +
  'print "ready (pid: $$, daemon)\\n"; sleep 1 while 1';

describe.skipIf(!unshareWorks)('PID 1: a daemon whose title overwrote its environment', () => {
  it('is the tree’s (unreadable, not absent): gsup stays after the command exits 0, and the daemon gets one SIGTERM', async () => {
    // The command waits until the daemon is gsup's child (its first fork gone): no look sees it descend from the run.
    const run = gsupAsPid1(['-v', '--', 'sh', '-c', `perl -e '${TITLED}'; sleep 0.5; exit 0`]);
    await run.ready('daemon');
    const gsupPid = await pid1(run);
    // Before: "is not the tree's: … (read: absent)", gsup exited with the command and the namespace's end killed it.
    await run.waitForLine(/is the tree's: reparented to gsup, its mark cannot be read \(its environment overwritten/, {
      stream: 'stderr',
    });
    await run.waitForLine(/command exited \(code 0\); waiting for \d+ remaining process/, { stream: 'stderr' });
    expect(run.exit).toBeUndefined();
    process.kill(gsupPid, 'SIGTERM');
    const exit = await run.finished();
    expect(exit.code, run.transcript()).toBe(0); // the daemon's own status
    expect(run.count(/^signal: SIGTERM .*daemon\)$/), run.transcript()).toBe(1);
  });
});

// What gsup cannot signal is not its (issue 35): a daemon started from outside gsup's PID namespace (as `docker exec`
// does: nsenter into it) is never signalled by a stop, a restart or a reload, and never waited for.

/** A shell that enters gsup's PID and mount namespaces (`docker exec`), running `script` there. */
const enter = (gsupPid: number, script: string) =>
  new Run('nsenter', ['-t', String(gsupPid), '-p', '-m', 'sh', '-c', script]);

// A daemon that sets its title (its mark unreadable: its environment overwritten), in a session of its own
// (`setsid`), and says each SIGTERM it gets. It stays its parent's child until that parent exits.
const titled = (setsid: boolean) =>
  `perl -e 'use POSIX; ${setsid ? 'POSIX::setsid(); ' : ''}$0 = "mydaemon: master process"; $| = 1; ` +
  '$SIG{TERM} = sub { print "signal: SIGTERM (pid: $$, daemon)\\n"; exit 0 }; ' +
  `print "ready (pid: $$, daemon)\\n"; sleep 1 while 1'`;

/** A scrape of /metrics asked for (it asks gsup for a look), its answer not waited for. */
const scraped = (port: number) => (status(port, '/metrics').catch(() => undefined), true);

/** The host pid of gsup's child that runs this script (the app). */
const appOf = (gsupPid: number, script: string) =>
  allProcs().find((proc) => proc.ppid === gsupPid && commandLine(proc.pid).includes(script))!.pid;

/** gsup's stop, from SIGTERM to its exit. */
async function timedStop(run: Run, gsupPid: number): Promise<{ code: number | null; ms: number }> {
  const sent = Date.now();
  process.kill(gsupPid, 'SIGTERM');
  const exit = await run.finished(20_000);
  return { code: exit.code, ms: Date.now() - sent };
}

/**
 * gsup as uid 65534, PID 1 of a new PID namespace (`USER node` in a Dockerfile), from a copy that user can read
 * (the checkout may sit in a folder only root can enter): the fixtures its arguments name are the copy's.
 */
const gsupAsPid1Nobody = (args: string[]) => {
  const copy = forAnyone({ gsup: true, fixtures: ['printer.js', 'daemonize.js', 'reload-app.js'] });
  const named = args.map((arg) => (arg.startsWith(fixture('')) ? copy.fixture(arg.slice(fixture('').length)) : arg));
  return new Run('unshare', ['--pid', '--fork', '--mount-proc', ...DROP, process.execPath, copy.gsup, ...named], {
    namespaced: true,
    cwd: copy.path, // the runs start where gsup started: a folder that user can enter
  });
};

describe.skipIf(!dropWorks || !nsenterWorks)('PID 1: what gsup cannot signal, what entered from outside', () => {
  it('gsup as uid 65534, a root daemon `docker exec -u root` left: the stop ends in the app’s time, never signalling it', async () => {
    const run = gsupAsPid1Nobody(['-v', '-t', '6s', '--', 'node', PRINTER, '--cleanup', '100']);
    let exec: Run | undefined;
    try {
      await run.ready();
      const gsupPid = await pid1(run);
      // Root, from outside, in a session of its own: gsup cannot read its mark, nor signal it.
      exec = enter(gsupPid, `setsid node ${PRINTER} --label rootd & exit 0`);
      await exec.ready('rootd');
      const stop = await timedStop(run, gsupPid);
      expect(stop.code, run.transcript()).toBe(0);
      // Before: "still alive after SIGKILL", 13 s with -t 6s.
      expect(stop.ms, run.transcript()).toBeLessThan(4000);
      expect(run.stderr.join('\n')).toMatch(/is not the tree's: gsup may not signal it \(EPERM/);
      expect(run.stderr.join('\n')).toMatch(/stopped in \S+: 1 exited by themselves, 0 killed$/m);
      expect(run.count(/^signal: SIGTERM .*printer/)).toBe(1);
      expect(exec.count(/^signal: /), exec.transcript()).toBe(0);
    } finally {
      await exec?.finished().catch(() => undefined);
    }
  });

  it('gsup as uid 65534: the app’s own setsid daemon (its user) is still the tree’s: waited for, one SIGTERM at the stop', async () => {
    const daemonize = [process.execPath, fixture('daemonize.js'), '--then', 'exit:0', '--', '--cleanup', '100'];
    const run = gsupAsPid1Nobody(['-v', '--', ...daemonize]);
    await run.ready('daemon');
    const gsupPid = await pid1(run);
    await run.waitForLine(/command exited \(code 0\); waiting for 1 remaining process/, { stream: 'stderr' });
    expect(run.exit).toBeUndefined();
    process.kill(gsupPid, 'SIGTERM');
    expect((await run.finished()).code, run.transcript()).toBe(0);
    expect(run.count(/^signal: SIGTERM .*daemon\)$/), run.transcript()).toBe(1);
    expect(run.stderr.join('\n')).not.toMatch(/may not signal/);
  });

  it('gsup as uid 65534: a crash-restart does not wait for the root daemon, and gsup exits with the command’s 0', async () => {
    const dir = tempDir();
    let exec: Run | undefined;
    try {
      chmodSync(dir.path, 0o777); // the dropped command writes and waits for files there
      const go = join(dir.path, 'go');
      const script =
        `if [ -e ${dir.path}/ran ]; then exit 0; fi; touch ${dir.path}/ran; ` +
        `echo 'ready (pid: 0, first)'; while [ ! -e ${go} ]; do sleep 0.05; done; exit 1`;
      const run = gsupAsPid1Nobody(
        ['-v', '-t', '6s', '--restart', 'on-failure', '--restart-delay', '10ms', '--'].concat(['sh', '-c', script]),
      );
      await run.ready('first');
      const gsupPid = await pid1(run);
      exec = enter(gsupPid, `setsid node ${PRINTER} --label rootd & exit 0`);
      await exec.ready('rootd');
      const sent = Date.now();
      writeFileSync(go, '');
      // Before: the restart waited the kill timeout and more, and gsup never exited after run 2's exit 0.
      const exit = await run.finished(15_000);
      expect(exit.code, run.transcript()).toBe(0);
      expect(Date.now() - sent, run.transcript()).toBeLessThan(4000);
      expect(run.stderr.join('\n')).toMatch(/command exited with code 1 \(restart 1 of \d+\): restarting in/);
      expect(exec.count(/^signal: /), exec.transcript()).toBe(0);
    } finally {
      await exec?.finished().catch(() => undefined);
      dir.remove();
    }
  });

  it.each([
    ['root gsup with Docker’s capabilities (no CAP_SYS_PTRACE)', 'docker'],
    ['root gsup with every capability', 'all'],
    ['gsup as uid 65534 (the daemon too)', 'nobody'],
  ] as const)(
    '%s: a titled daemon `docker exec` started, seen by a look before it was orphaned, is never signalled by a restart, a reload or a stop',
    async (_, who) => {
      const dir = tempDir();
      const statusPort = await freePort();
      const args = ['-v', '-t', '6s', '--restart', 'always', '--restart-delay', '10ms', '--reload-signal', 'HUP'];
      const command = [
        '--wait-ready',
        '--status-port',
        `${statusPort}`,
        '--',
        'node',
        fixture('reload-app.js'),
        '--worker',
      ];
      const run = { docker: gsupAsPid1WithDockerCaps, all: gsupAsPid1, nobody: gsupAsPid1Nobody }[who]([
        ...args,
        ...command,
      ]);
      let exec: Run | undefined;
      try {
        await run.ready('reload-app');
        const gsupPid = await pid1(run);
        // `docker exec`'s shell stays until told: the daemon is its child meanwhile.
        const go = join(dir.path, 'go');
        const daemon = `${who === 'nobody' ? `${DROP.join(' ')} ` : ''}${titled(true)}`; // gsup's own user under 65534
        exec = enter(gsupPid, `${daemon} & while [ ! -e ${go} ]; do sleep 0.05; done; exit 0`);
        await exec.ready('daemon');
        // A look (a scrape asks for one) sees the shell enter from outside, and the daemon below it.
        const seen = /is not the tree's: it entered gsup's PID namespace from outside \(seen with parent pid 0/;
        await waitFor(() => scraped(statusPort) && run.stderr.some((line) => seen.test(line)), 'a look');
        writeFileSync(go, ''); // the shell leaves: the daemon is gsup's child now
        const below = /is not the tree's: it descends from pid \d+, which entered/; // the daemon, once orphaned
        const judged = () => scraped(statusPort) && run.stderr.some((line) => below.test(line));
        await waitFor(judged, 'its judgment', 10_000).catch((error: Error) => {
          throw new Error(`${error.message}\n${run.transcript()}\n${exec?.transcript()}`);
        });
        // A restart (the app killed), then a reload: each run gets SIGTERM at most once, the daemon never.
        process.kill(appOf(gsupPid, 'reload-app.js'), 'SIGKILL');
        await run.waitForLine(/^said ready .* run=2 /);
        process.kill(gsupPid, 'SIGHUP');
        await run.waitForLine(/^said ready .* run=3 /);
        await run.waitForLine(/retired in/, { stream: 'stderr', timeoutMs: 10_000 });
        const stop = await timedStop(run, gsupPid);
        expect(stop.code, run.transcript()).toBe(0);
        expect(stop.ms, run.transcript()).toBeLessThan(4000);
        // Before: the daemon was the tree's (its mark unreadable): SIGTERMed by the restart's stop.
        expect(exec.count(/^signal: /), exec.transcript()).toBe(0);
      } finally {
        await exec?.finished().catch(() => undefined);
        dir.remove();
      }
    },
    40_000,
  );

  it('gsup in a session of its own (as runtimes start PID 1): a daemon `docker exec` left in its session, never looked at before, is never signalled', async () => {
    const run = new Run(
      'unshare',
      ['--pid', '--fork', '--mount-proc', 'setsid', process.execPath, GSUP, '-v', '-t', '6s', '--', 'node', PRINTER],
      { namespaced: true },
    );
    let exec: Run | undefined;
    try {
      await run.ready();
      const gsupPid = await pid1(run);
      // No setsid: the daemon stays in the session `docker exec` began outside (session id 0 in the namespace).
      exec = enter(gsupPid, `${titled(false)} & exit 0`);
      await exec.ready('daemon');
      const stop = await timedStop(run, gsupPid);
      expect(stop.code, run.transcript()).toBe(0);
      expect(stop.ms, run.transcript()).toBeLessThan(4000);
      expect(run.stderr.join('\n')).toMatch(/is not the tree's: its session began outside gsup's PID namespace/);
      expect(exec.count(/^signal: /), exec.transcript()).toBe(0);
    } finally {
      await exec?.finished().catch(() => undefined);
    }
  });
});
