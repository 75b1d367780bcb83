import { describe, expect, it } from 'vitest';
import { fixture, gsup, markerPath } from '../helpers/gsup.js';
import { load, request, socketInodes, socketsOnPort } from '../helpers/listen.js';
import { freePort } from '../helpers/net.js';

// --listen end to end, gsup and its preload together: an unchanged Node app (`server.listen(PORT)`) behind
// `npx tsx`, taken over without a line of its own changed, and its crash-restarts refusing nothing.

const APP = fixture('preload-app.js');

describe('--listen with the preload: an unchanged app', () => {
  it('npx tsx app (server.listen(PORT)): the app answers on the socket gsup holds, and -v says which run took it', async () => {
    const port = await freePort();
    const run = gsup(['-v', '--listen', String(port), '--', 'npx', 'tsx', APP, 'http', 'port'], {
      env: { PORT: String(port) },
    });
    const listening = await run.waitForLine(/^listening \(pid: (\d+), port: (\d+)/, { timeoutMs: 20_000 });
    const appPid = Number(listening[1]);
    expect(Number(listening[2])).toBe(port);
    expect((await request(port)).body).toBe(`pid ${appPid}`);
    // One listening socket on the port: gsup's, which the app holds too (it bound none of its own).
    const listeners = socketsOnPort(port).filter((socket) => socket.state === '0A');
    expect(listeners).toHaveLength(1);
    expect(socketInodes(run.pid)).toContain(listeners[0].inode);
    expect(socketInodes(appPid)).toContain(listeners[0].inode);
    await run.waitForLine(new RegExp(`run 1: pid ${appPid} took the held socket ${port}`), { stream: 'stderr' });
    run.signal('SIGTERM');
    // The app exits 0 on SIGTERM; npx (npm exec) dies of it. gsup says the app's 0 when it reaped that 0 itself
    // (tsx orphaned to it: npm gone first), else npm's own 143 (npm reaped tsx): who exits first is npm's race.
    expect([0, 143], run.transcript()).toContain((await run.finished()).code);
  });

  it('crash-restarts of that app under load (20 clients, one connection a request, two crashes): 0 refused', async () => {
    const port = await freePort();
    const count = markerPath();
    // Runs 1 and 2 crash 1.3 s after they listen; run 3 serves on.
    const script =
      `n=$(cat ${count} 2>/dev/null || echo 0); echo $((n + 1)) > ${count}; ` +
      `if [ "$n" -lt 2 ]; then CRASH_AFTER=1300 exec node ${APP} http port; else exec node ${APP} http port; fi`;
    const args = ['--listen', String(port), '--restart', 'always', '--restart-delay', '100ms'];
    const run = gsup([...args, '--', 'sh', '-c', script], { env: { PORT: String(port) } });
    await run.waitForLine(/^listening \(pid: \d+/);
    const runs = () => run.count(/^listening \(pid: \d+/);
    let thirdAt: number | undefined;
    const done = () => {
      if (thirdAt === undefined && runs() >= 3) thirdAt = Date.now();
      return thirdAt !== undefined && Date.now() - thirdAt > 500;
    };
    const counts = await load(port, 20, 20_000, done);
    expect(runs()).toBe(3);
    expect(counts.refused).toBe(0);
    expect(counts.timeout).toBe(0);
    expect(counts.ok).toBeGreaterThan(100);
    run.signal('SIGTERM');
    await run.finished();
  });
});
