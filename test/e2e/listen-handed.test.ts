import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { GSUP, Run, fixture, gsup } from '../helpers/gsup.js';
import { load, request, socketInodes, socketsOnPort } from '../helpers/listen.js';
import { freePort } from '../helpers/net.js';

// Sockets handed to gsup itself (systemd's convention: LISTEN_FDS, its own LISTEN_PID, LISTEN_FDNAMES), with real
// processes: a gsup under a gsup with --listen, and socket activation without systemd (fixtures/activate.py binds,
// then execs gsup in place). A socket matched to a --listen is held instead of a new bind; the others are closed.

const APP = fixture('listen-app.js');
const RELOAD_APP = fixture('reload-app.js');
const ACTIVATE = fixture('activate.py');

const listening = (port: number) => socketsOnPort(port).filter((socket) => socket.state === '0A');
const stderrSays = (run: Run, pattern: RegExp) =>
  run.waitForLine(pattern, { stream: 'stderr', timeoutMs: 20_000 }).then(() => true);

/** The pid of the app's n-th `listening (pid: N, port: P…` line (1-based), once printed. */
async function nthListening(run: Run, n: number): Promise<number> {
  await run.waitForLine(new RegExp(`^listening \\(pid: \\d+`), { timeoutMs: 20_000 });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const lines = run.stdout.filter((line) => line.startsWith('listening (pid: '));
    if (lines.length >= n) return Number(/pid: (\d+)/.exec(lines[n - 1])![1]);
    if (Date.now() > deadline || run.exit) throw new Error(`no listening line ${n}:\n${run.transcript()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('sockets handed to gsup: a gsup under a gsup', () => {
  it("gsup --listen P -- gsup --listen P -- app: the inner gsup holds the outer one's socket, the app serves on it; a crash-restart and a reload of the outer go on serving", async () => {
    const port = await freePort();
    const outer = ['-v', '--listen', String(port), '--restart', 'always', '--restart-delay', '100ms'];
    const inner = [
      process.execPath,
      GSUP,
      '-v',
      '--listen',
      String(port),
      '--',
      'node',
      RELOAD_APP,
      '--port',
      String(port),
    ];
    const run = gsup([...outer, '--reload-signal', 'HUP', '--', ...inner]);
    const first = await nthListening(run, 1);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${first}\n` });
    // The inner gsup held the socket it was handed (fd 3) instead of binding: one listening socket on the port.
    const [socket] = listening(port);
    expect(listening(port)).toHaveLength(1);
    expect(socketInodes(run.pid)).toContain(socket.inode);
    expect(socketInodes(first)).toContain(socket.inode);
    expect(
      await stderrSays(
        run,
        new RegExp(`holding ${port} on \\[::\\]:${port} \\(backlog \\d+, handed to gsup at fd 3\\)`),
      ),
    ).toBe(true);

    // A crash: the app dies, the inner gsup ends with it, the outer starts the next inner gsup on the same socket.
    process.kill(first, 'SIGKILL');
    const second = await nthListening(run, 2);
    expect(second).not.toBe(first);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${second}\n` });

    // A reload under load: the next inner gsup takes the same socket beside the serving one; the old one, retired,
    // closes its copy without shutting the socket down for the others.
    let over = false;
    const loaded = load(port, 4, 60_000, () => over);
    await new Promise((resolve) => setTimeout(resolve, 200));
    run.signal('SIGHUP');
    await stderrSays(run, /run 2 retired in/);
    const third = await nthListening(run, 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    over = true;
    const counts = await loaded;
    console.log(`a reload of the outer gsup under load, through the inner one: ${JSON.stringify(counts)}`);
    expect(counts).toMatchObject({ refused: 0, reset: 0, timeout: 0 });
    expect(counts.ok).toBeGreaterThan(10);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${third}\n` });
    expect(listening(port).map((found) => found.inode)).toEqual([socket.inode]);
    expect(run.stderr.filter((line) => /EADDRINUSE|cannot hold|in use/.test(line))).toEqual([]);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });
});

describe('sockets handed to gsup: socket activation without systemd', () => {
  for (const nodeOptions of [undefined, '--max-old-space-size=256']) {
    it(`gsup holds the very socket it was handed (the same inode); a client that came before gsup is served${nodeOptions ? " (NODE_OPTIONS set: across gsup's own execve)" : ''}`, async () => {
      const port = await freePort();
      const args = ['--names', 'web', '--wait-client', `127.0.0.1:${port}`, '--'];
      const command = [process.execPath, GSUP, '-v', '--listen', `web=127.0.0.1:${port}`, '--', 'node', APP];
      const run = new Run('python3', [ACTIVATE, ...args, ...command], {
        env: nodeOptions ? { NODE_OPTIONS: nodeOptions } : {},
      });
      const [, ino] = await run.waitForLine(/^bound 0 (\d+) \d+$/);
      // A client before gsup: it waits in the queue of the socket the launcher bound.
      const early = new Promise<string>((resolve, reject) => {
        let answer = '';
        const client = connect(port, '127.0.0.1', () =>
          client.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        );
        client.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
        client.on('end', () => resolve(answer)).on('error', reject);
      });
      const pid = await run.ready('listen-app');
      expect(run.stdout.find((line) => line.startsWith('ready '))).toContain(
        `LISTEN_PID=${pid} LISTEN_FDS=1 LISTEN_FDNAMES=web `,
      );
      expect(await early).toMatch(new RegExp(`^HTTP/1\\.1 200 [\\s\\S]*\\r\\n\\r\\n${pid}\\n$`));
      // gsup is the launcher's process (exec in place) and holds the launcher's socket: no other listens there.
      expect(listening(port).map((socket) => socket.inode)).toEqual([Number(ino)]);
      expect(socketInodes(run.pid)).toContain(Number(ino));
      expect(socketInodes(pid)).toContain(Number(ino));
      expect(run.stderr).toContain(`[gsup] holding web on 127.0.0.1:${port} (backlog 128, handed to gsup at fd 3)`);
      expect((await request(port)).body).toBe(`${pid}\n`);
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0); // the app leaves with 0 on SIGTERM
    });
  }

  it("a handed socket that is no --listen's is not taken (closed, one line); one not for gsup's pid is left alone", async () => {
    const [handed, wanted] = [await freePort(), await freePort()];
    const command = [process.execPath, GSUP, '-v', '--listen', `127.0.0.1:${wanted}`, '--', 'node', APP];
    const run = new Run('python3', [ACTIVATE, `127.0.0.1:${handed}`, '--', ...command]);
    const [, ino] = await run.waitForLine(/^bound 0 (\d+) \d+$/);
    const pid = await run.ready('listen-app');
    expect(run.stderr).toContain(
      `[gsup] LISTEN_FDS: the socket at fd 3 (127.0.0.1:${handed}) is no --listen's: closed`,
    );
    // gsup bound its own socket for --listen, and no process holds the handed one any more: refused.
    expect(await request(wanted)).toEqual({ outcome: 'ok', body: `${pid}\n` });
    expect(listening(wanted).map((socket) => socket.inode)).not.toContain(Number(ino));
    expect(listening(handed)).toEqual([]);
    expect((await request(handed)).outcome).toBe('refused');
    run.signal('SIGTERM');
    await run.finished();

    // Named as the --listen but listening elsewhere: a usage error naming both, nothing started.
    const named = new Run('python3', [
      ACTIVATE,
      '--names',
      'web',
      `127.0.0.1:${handed}`,
      '--',
      process.execPath,
      GSUP,
      '--listen',
      `web=127.0.0.1:${wanted}`,
      '--',
      'echo',
      'started',
    ]);
    expect((await named.finished()).code).toBe(125);
    expect(named.stderr).toEqual([
      `gsup: the socket handed to gsup as web (fd 3) listens on 127.0.0.1:${handed}, not on 127.0.0.1:${wanted} (--listen)`,
    ]);
    expect(named.stdout.filter((line) => line === 'started')).toEqual([]);

    // LISTEN_PID not gsup's: the sockets are not its own (as systemd's sd_listen_fds says); it binds, and the
    // port the launcher holds is in use.
    const other = new Run('python3', [
      ACTIVATE,
      '--not-yours',
      `127.0.0.1:${handed}`,
      '--',
      process.execPath,
      GSUP,
      '--listen',
      `127.0.0.1:${handed}`,
      '--',
      'echo',
      'started',
    ]);
    expect((await other.finished()).code).toBe(125);
    expect(other.stderr).toEqual([`gsup: cannot hold ${handed} on 127.0.0.1:${handed} (--listen): the port is in use`]);
  });
});
