import { writeSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Handover } from '../../../src/engine/listen/handover.js';
import { HeldSockets } from '../../../src/engine/listen/held.js';
import type { HeldInput } from '../../../src/engine/machine/state.js';
import { linuxPlatform } from '../../../src/platform/linux/platform.js';
import { Logger } from '../../../src/output/log.js';
import { freePort } from '../../helpers/net.js';
import { waitFor } from '../../helpers/proc.js';

// What each run's spawn gets of the held sockets (real sockets, Linux), and its own report channel: a word
// counts for the run whose channel carried it, and the channel's end is said once.

const silent = new Logger({ verbosity: -1, write: () => {} });
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function setup(preload?: (app: string | undefined) => string | undefined) {
  const port = await freePort();
  const held = HeldSockets.bind([{ name: 'web', host: '127.0.0.1', family: 4, port }], linuxPlatform) as HeldSockets;
  cleanups.push(() => held.shut(['web']));
  const heard: HeldInput[] = [];
  // The far ends the test holds, as a run's processes would: gsup's close of its copy leaves them open.
  const kept = new Set<number>();
  const sockets = linuxPlatform.sockets!;
  const platform = {
    ...linuxPlatform,
    sockets: { ...sockets, close: (fd: number) => kept.has(fd) || sockets.close(fd) },
  };
  const keep = (fd: number) => kept.add(fd);
  const release = (fd: number) => (kept.delete(fd), sockets.close(fd));
  const handover = new Handover(
    held,
    platform,
    silent,
    (input) => heard.push(input),
    preload && { nodeOptions: preload },
  );
  cleanups.push(() => handover.close());
  return { held, heard, handover, port, keep, release };
}

const say = (fd: number, text: string) => writeSync(fd, text);

describe.runIf(process.platform === 'linux')('Handover', () => {
  it("a run's fds, variables and exec step: systemd's convention, LISTEN_PID left to the exec step", async () => {
    const { held, handover, port } = await setup();
    const run = handover.started(1, { PATH: '/bin', LISTEN_PID: '1', NODE_OPTIONS: '--app' });
    cleanups.push(run.spawned);
    expect(run.fds).toHaveLength(2);
    expect(run.fds[0]).toBe(held.fds()[0]);
    expect(run.env).toEqual({
      PATH: '/bin',
      NODE_OPTIONS: '--app',
      LISTEN_FDS: '1',
      LISTEN_FDNAMES: 'web',
      GSUP_LISTEN_ID: expect.stringMatching(new RegExp(`^\\d+:\\d+@127\\.0\\.0\\.1:${port}$`)),
      GSUP_REPORT_FD: '4',
    });
    expect(run.exec).toEqual({
      argv: ['/bin/sh', '-c', 'LISTEN_PID=$$; export LISTEN_PID; exec "$0" "$@"'],
      helper: false,
    });
  });

  it("the preload's NODE_OPTIONS: the app's own first, as the preload file composes them; none if it says none", async () => {
    const { handover } = await setup((app) => (app === undefined ? undefined : `${app} --require "/run/gsup/p.cjs"`));
    const given = handover.started(1, { NODE_OPTIONS: '--app' });
    given.spawned();
    expect(given.env.NODE_OPTIONS).toBe('--app --require "/run/gsup/p.cjs"');
    const none = handover.started(2, {});
    none.spawned();
    expect('NODE_OPTIONS' in none.env).toBe(false);
    // Only where gsup's preload is the first code Node runs does the Node set LISTEN_PID before the app's.
    const otel = handover.started(3, { NODE_OPTIONS: '--require /app/otel.js' });
    otel.spawned();
    expect([given.preloadFirst, none.preloadFirst, otel.preloadFirst]).toEqual([true, false, false]);
  });

  it('words of a run count for that run alone; what is not a word is dropped; the end is said once', async () => {
    const { heard, handover, keep, release } = await setup();
    const one = handover.started(1, {});
    const two = handover.started(2, {});
    const far = (run: typeof one) => run.fds[1];
    keep(far(one));
    keep(far(two));
    one.spawned();
    two.spawned();
    say(far(one), '{"word":"listen","name":"web","pid":101}\n');
    say(far(two), '{"word":"listen","name":"web","pid":201}\n{"word":"close","name":"web","pid":201}\n');
    // Not words: a name gsup does not hold, no pid, not JSON, a line far too long (dropped to its end).
    say(far(one), '{"word":"listen","name":"nope","pid":102}\n{"word":"listen","name":"web","pid":0}\nhello\n');
    say(far(one), `${'x'.repeat(5000)}{"word":"close","name":"web","pid":101}\n`);
    say(far(one), '{"word":"close","name":"web",');
    say(far(one), '"pid":101}\n');
    await waitFor(() => heard.length >= 4, 'four words');
    release(far(one)); // the far end's last holder gone: the channel ends
    await waitFor(() => heard.some((input) => input.kind === 'report-closed'), "run 1's end");
    const of = (run: number) => heard.filter((input) => input.run === run);
    expect(of(1)).toEqual([
      { kind: 'socket-taken', run: 1, name: 'web', pid: 101, seen: 'word' },
      { kind: 'socket-closed', run: 1, name: 'web', pid: 101 },
      { kind: 'report-closed', run: 1 },
    ]);
    expect(of(2)).toEqual([
      { kind: 'socket-taken', run: 2, name: 'web', pid: 201, seen: 'word' },
      { kind: 'socket-closed', run: 2, name: 'web', pid: 201 },
    ]);
    // A retired run's channel is let go: its end says nothing more.
    handover.retire(2);
    release(far(two));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toHaveLength(5);
  });

  it('a word said before the spawn waits in the channel: read from the spawn on (node:net loads only then)', async () => {
    const { heard, handover, keep, release } = await setup();
    const run = handover.started(1, {});
    const far = run.fds[1];
    keep(far);
    cleanups.push(() => release(far));
    say(far, '{"word":"listen","name":"web","pid":101}\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toEqual([]);
    run.spawned();
    await waitFor(() => heard.length >= 1, 'the word');
    expect(heard).toEqual([{ kind: 'socket-taken', run: 1, name: 'web', pid: 101, seen: 'word' }]);
  });
});
