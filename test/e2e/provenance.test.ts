import { describe, expect, it } from 'vitest';
import { gsupAsPid1, hostPidOfPid1, unshareWorks, type Run } from '../helpers/gsup.js';
import { forAnyone } from '../helpers/anyone.js';
import { CAP_SYS_PTRACE, DROP, capEff, dropWorks, gsupAsPid1WithDockerCaps } from '../helpers/caps.js';
import { waitFor } from '../helpers/proc.js';

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
