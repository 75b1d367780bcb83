import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forAnyone } from '../helpers/anyone.js';
import { GSUP, ROOT, Run, fixture, gsup, markerPath } from '../helpers/gsup.js';
import { gsupLine, inPty, ptySkipReason } from '../helpers/pty.js';
import { load, request, socketsOnPort } from '../helpers/listen.js';
import { freePort, status } from '../helpers/net.js';
import { isAlive, waitFor } from '../helpers/proc.js';

// --listen, gsup's side, with real processes: the sockets gsup holds, what a run gets (fds 3…, LISTEN_*),
// that gsup never accepts, restarts that refuse nothing, and the final stop. The apps here take the sockets
// themselves (systemd's convention): Node's `listen({ fd: 3 }, backlog)`, Python's `socket.socket(fileno=3)`.

const APP = fixture('listen-app.js');
const PY = fixture('listen-app.py');

async function ports(count: number): Promise<number[]> {
  const found: number[] = [];
  while (found.length < count) {
    const port = await freePort();
    if (!found.includes(port)) found.push(port);
  }
  return found;
}

const lineOf = (run: Run, pattern: RegExp) => run.stdout.find((line) => pattern.test(line));

describe('--listen: the sockets gsup holds', () => {
  it('every ADDRESS form: fds 3… are listening sockets of the family, address, port and inode named', async () => {
    const [a, b, c, d, e] = await ports(5);
    const run = gsup([
      '--listen',
      String(a),
      '--listen',
      `admin=127.0.0.1:${b}`,
      '--listen',
      `[::1]:${c}`,
      '--',
      'python3',
      PY,
    ]);
    const pid = await run.ready('listen-app.py');
    const handed = lineOf(run, /^handed /)!;
    expect(handed).toContain(`LISTEN_PID=${pid} LISTEN_FDS=3 LISTEN_FDNAMES=${a}:admin:${c} `);
    expect(handed).toContain('GSUP_REPORT_FD=6');
    const ids = /GSUP_LISTEN_ID=(\S+)/.exec(handed)![1].split(',');
    const expected = [
      [3, 'inet6', '::', a, `[::]:${a}`],
      [4, 'inet', '127.0.0.1', b, `127.0.0.1:${b}`],
      [5, 'inet6', '::1', c, `[::1]:${c}`],
    ] as const;
    expected.forEach(([fd, family, host, port, address], index) => {
      const line = lineOf(run, new RegExp(`^fd ${fd} `))!;
      expect(line).toMatch(
        new RegExp(`^fd ${fd} family=${family} host=${host} port=${port} listening=1 dev=\\d+ ino=\\d+$`),
      );
      // GSUP_LISTEN_ID names each fd by fstat's device and inode, with the address as bound.
      const [, dev, ino] = /dev=(\d+) ino=(\d+)/.exec(line)!;
      expect(ids[index]).toBe(`${dev}:${ino}@${address}`);
    });
    // PORT is every interface, IPv4 too (IPV6_V6ONLY=0); each socket is served.
    for (const [port, host] of [
      [a, '127.0.0.1'],
      [a, '::1'],
      [b, '127.0.0.1'],
      [c, '::1'],
    ] as const)
      expect(await request(port, host)).toMatchObject({ outcome: 'ok', body: expect.stringMatching(`^${pid} fd `) });
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(143);

    // GSUP_LISTEN: a comma list, NAME=[V6]:PORT among it.
    const fromEnv = gsup(['--', 'python3', PY], { env: { GSUP_LISTEN: `v6=[::]:${d},${e}` } });
    await fromEnv.ready('listen-app.py');
    expect(lineOf(fromEnv, /^handed /)).toContain(`LISTEN_FDS=2 LISTEN_FDNAMES=v6:${e} `);
    expect(lineOf(fromEnv, /^fd 3 /)).toContain(`family=inet6 host=:: port=${d} listening=1`);
    expect(lineOf(fromEnv, /^fd 4 /)).toContain(`family=inet6 host=:: port=${e} listening=1`);
    fromEnv.signal('SIGTERM');
    await fromEnv.finished();
  });

  it('a socket that cannot be had is a usage error: one line naming it, exit 125, nothing started', async () => {
    const busy = createServer();
    const [taken] = await ports(1);
    await new Promise<void>((resolve) => busy.listen(taken, '0.0.0.0', resolve));
    try {
      const cases: Array<[string[], RegExp]> = [
        [
          ['--listen', String(taken)],
          new RegExp(`^gsup: cannot hold ${taken} on \\[::\\]:${taken} \\(--listen\\): the port is in use$`),
        ],
        [['--listen', '0'], /^gsup: invalid value "0" for --listen: port "0" is not 1-65535$/],
        [['--listen', 'web=65536'], /^gsup: invalid value "web=65536" for --listen: port "65536" is not 1-65535$/],
        [['--listen', 'web=8080', '--listen', 'web=[::1]:8081'], /^gsup: the name "web" is given twice for --listen/],
        [['--listen', 'localhost:8080'], /"localhost" is no literal address \(no name is looked up\)$/],
        [
          ['--listen', '080'],
          /^gsup: invalid value "080" for --listen: port "080" has a leading zero: write it without$/,
        ],
        [
          ['--listen', '[fe80::1]'],
          /^gsup: invalid value "\[fe80::1\]" for --listen: no port: expected \[IPv6\]:PORT$/,
        ],
        [
          ['--listen', '[fe80::1]:8080'],
          /^gsup: invalid value "\[fe80::1\]:8080" for --listen: "fe80::1" is link-local/,
        ],
      ];
      for (const [args, line] of cases) {
        const run = gsup([...args, '--', 'echo', 'started']);
        expect((await run.finished()).code, args.join(' ')).toBe(125);
        expect(run.stderr, args.join(' ')).toEqual([expect.stringMatching(line)]);
        expect(run.stdout).toEqual([]);
      }
    } finally {
      busy.close();
    }
  });

  it("a usage error after the sockets are held (the status port taken): 125, and nothing of the preload's in /tmp", async () => {
    const busy = createServer();
    const [port, taken] = await ports(2);
    await new Promise<void>((resolve) => busy.listen(taken, '0.0.0.0', resolve));
    const entries = () => readdirSync(tmpdir());
    try {
      const before = entries();
      const run = gsup(['--listen', `127.0.0.1:${port}`, '--status-port', `${taken}`, '--', 'echo', 'started']);
      expect((await run.finished()).code).toBe(125);
      expect(run.stderr).toEqual([expect.stringMatching(/^gsup: cannot serve the status endpoint on .*EADDRINUSE/)]);
      expect(run.stdout).toEqual([]);
      // TMPDIR (this file's own folder, as /tmp: 1777) is never where the preload goes, nor anything of gsup's.
      const ran = gsup(['-vv', '--listen', `127.0.0.1:${port}`, '--', 'echo', 'started']);
      expect((await ran.finished()).code).toBe(0);
      const line = ran.stderr.find((text) => text.includes('listen preload at '));
      const path = /listen preload at (\S+)/.exec(line ?? '')?.[1];
      expect(path, ran.transcript()).toMatch(/listen-preload[-\w]*\.cjs$/);
      expect(path!.startsWith(tmpdir())).toBe(false);
      expect(entries()).toEqual(before);
      // And it stays: a process of the tree may outlive gsup, and still name it.
      expect(existsSync(path!)).toBe(true);
    } finally {
      busy.close();
    }
  });

  it('a privileged port as another user than root: 125, one line that says why', async () => {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'latin1'));
    if (process.getuid?.() !== 0 || !(start > 1)) {
      console.log(`skipped: needs root to drop to nobody, and ip_unprivileged_port_start above 1 (it is ${start})`);
      return;
    }
    const port = start - 1;
    // gsup itself as nobody: its copy, where nobody can read it (the checkout may sit in a 0700 folder).
    const copy = forAnyone({ gsup: true });
    const args = ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, copy.gsup];
    const run = new Run('setpriv', [...args, '--listen', String(port), '--', 'echo', 'started'], { cwd: copy.path });
    expect((await run.finished()).code).toBe(125);
    expect(run.stderr).toEqual([
      `gsup: cannot hold ${port} on [::]:${port} (--listen): permission denied: ` +
        `ports below ${start} (ip_unprivileged_port_start) need root or CAP_NET_BIND_SERVICE`,
    ]);
    expect(run.stdout).toEqual([]);
  });

  it('where the kernel has no IPv6 (socket(AF_INET6) fails: a seccomp filter here), PORT is 0.0.0.0', async () => {
    const socketCall = { x64: 41, arm64: 198 }[process.arch as string];
    if (socketCall === undefined) return void console.log(`skipped: no socket(2) number known for ${process.arch}`);
    const [port] = await ports(1);
    const EAFNOSUPPORT = 97;
    const filter = [fixture('seccomp-exec.js'), `${socketCall}:10=${EAFNOSUPPORT}`, process.execPath, GSUP];
    const run = new Run(process.execPath, [...filter, '-v', '--listen', String(port), '--', 'python3', PY]);
    const pid = await run.ready('listen-app.py');
    expect(run.stderr).toContain(`[gsup] holding ${port} on 0.0.0.0:${port} (backlog ${somaxconn()})`);
    expect(lineOf(run, /^fd 3 /)).toContain(`family=inet host=0.0.0.0 port=${port} listening=1`);
    expect(await request(port)).toMatchObject({ outcome: 'ok', body: `${pid} fd 3\n` });
    run.signal('SIGTERM');
    await run.finished();
  });
});

const somaxconn = () => Number(readFileSync('/proc/sys/net/core/somaxconn', 'latin1'));

describe('--listen: one address however written (issue 35, 5b)', () => {
  it("[0::0]:P is [::]:P: dual-stack, so an app's listen(P, '0.0.0.0') taken over into it still serves IPv4 clients", async () => {
    const port = await freePort();
    const app = ['node', fixture('preload-app.js'), 'http', 'port-host', '0.0.0.0'];
    const run = gsup(['-v', '--listen', `[0::0]:${port}`, '--', ...app], { env: { PORT: String(port) } });
    const pid = await run.ready('preload-app');
    await run.waitForLine(new RegExp(`^listening \\(pid: ${pid}`));
    expect(run.stderr.find((line) => line.includes('holding'))).toBe(
      `[gsup] holding ${port} on [::]:${port} (backlog ${somaxconn()})`,
    );
    expect(await request(port, '127.0.0.1')).toEqual({ outcome: 'ok', body: `pid ${pid}` });
    expect(await request(port, '::1')).toEqual({ outcome: 'ok', body: `pid ${pid}` });
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });

  it('[::ffff:7f00:1]:P is refused as its dotted form is: one line, exit 125', async () => {
    for (const host of ['::ffff:7f00:1', '::ffff:127.0.0.1']) {
      const run = gsup(['--listen', `[${host}]:8080`, '--', 'true']);
      expect((await run.finished()).code).toBe(125);
      expect(run.stderr).toEqual([
        `gsup: invalid value "[${host}]:8080" for --listen: "${host}" is an IPv4 address in IPv6 form: write 127.0.0.1:PORT`,
      ]);
    }
  });
});

describe('--listen: what a run gets', () => {
  it.each([
    ['node app.js', ['node', APP]],
    ["sh -c 'exec node app.js'", ['sh', '-c', `exec node ${APP}`]],
  ])('LISTEN_PID is the pid of the process that reads it: %s', async (_, command) => {
    const [port] = await ports(1);
    const run = gsup(['--listen', `127.0.0.1:${port}`, '--no-listen-preload', '--', ...command]);
    await run.ready('listen-app');
    const [, pid, listenPid] = /^ready \(pid: (\d+), listen-app\) LISTEN_PID=(\d+) LISTEN_FDS=1 /.exec(
      lineOf(run, /^ready /)!,
    )!;
    expect(listenPid).toBe(pid);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pid}\n` });
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });

  it("LISTEN_PID in a Node command with gsup's preload: the preload's own (no shell step); an app's preload sees it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
    try {
      // An app's preload before gsup's (APM agents): the shell's step has set LISTEN_PID when it loads.
      const early = join(dir, 'early.cjs');
      writeFileSync(early, 'console.log(`early (pid: ${process.pid}) LISTEN_PID=${process.env.LISTEN_PID}`);\n');
      for (const env of [{ NODE_OPTIONS: '' }, { NODE_OPTIONS: `--require ${early}` }]) {
        const [port] = await ports(1);
        const run = gsup(['--listen', `127.0.0.1:${port}`, '--', 'node', APP], { env });
        const pid = await run.ready('listen-app');
        expect(lineOf(run, /^ready /), run.transcript()).toMatch(new RegExp(`LISTEN_PID=${pid} LISTEN_FDS=1 `));
        if (env.NODE_OPTIONS) expect(run.stdout).toContain(`early (pid: ${pid}) LISTEN_PID=${pid}`);
        expect(await request(port)).toEqual({ outcome: 'ok', body: `${pid}\n` });
        run.signal('SIGTERM');
        expect((await run.finished()).code).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('LISTEN_PID is the pid of the process that reads it: a python3 app on socket.socket(fileno=3)', async () => {
    const [port] = await ports(1);
    const run = gsup(['--listen', `127.0.0.1:${port}`, '--', 'python3', PY]);
    const pid = await run.ready('listen-app.py');
    expect(lineOf(run, /^handed /)).toMatch(new RegExp(`^handed LISTEN_PID=${pid} LISTEN_FDS=1 `));
    run.signal('SIGTERM');
    await run.finished();
  });

  it.skipIf(ptySkipReason)(
    "with the terminal handed over by gsup's own helper (no setsid): one exec does both, fds 3… kept",
    async () => {
      const [port] = await ports(1);
      // No PATH: every tool by its path; the helper, a node, sets LISTEN_PID itself (no shell hop after it).
      const script =
        'if [ -S /proc/$$/fd/3 ] && [ -S /proc/$$/fd/4 ]; then echo fds-ok; fi; ' +
        'if (exec 5</dev/tty) 2>/dev/null; then echo ctty-ok; fi; echo "LISTEN_PID=$LISTEN_PID pid=$$"';
      const args = ['--listen', `127.0.0.1:${port}`, '--', '/bin/sh', '-c', script];
      const run = inPty(`exec ${gsupLine(args)}`, { env: { PATH: '/nonexistent' } });
      expect((await run.finished()).code, run.transcript()).toBe(0);
      expect(run.stdout).toContain('fds-ok');
      expect(run.stdout).toContain('ctty-ok');
      const [, listenPid, pid] = /^LISTEN_PID=(\d+) pid=(\d+)$/m.exec(run.stdout.join('\n')) ?? [];
      expect(listenPid).toBe(pid);
    },
  );

  it("where there is no shell, gsup's own exec helper sets LISTEN_PID, and keeps fds 3… and the IPC channel", async () => {
    const { held, socket } = await new Promise<{ held: ReturnType<typeof createServer>; socket: number }>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () =>
        resolve({ held: server, socket: (server as unknown as { _handle: { fd: number } })._handle.fd }),
      );
    });
    try {
      const check =
        "const fs = require('fs'); process.send(`pid=${process.pid} LISTEN_PID=${process.env.LISTEN_PID} " +
        "fd3=${fs.readlinkSync('/proc/self/fd/3')} steps=${process.env.GSUP_EXEC_STEPS}`)";
      const env = { ...process.env, GSUP_EXEC_STEPS: 'listen-pid', GSUP_EXEC_KEEP: '2', GSUP_EXEC_CHANNEL: '4' };
      const helper = spawn(process.execPath, [join(ROOT, 'dist', 'exec-tty.cjs'), process.execPath, '-e', check], {
        stdio: ['ignore', 'inherit', 'inherit', socket, 'ipc'],
        env,
      });
      const said = await new Promise<string>((resolve) =>
        helper.once('message', (message) => resolve(String(message))),
      );
      await new Promise((resolve) => helper.once('exit', resolve));
      const [, pid, listenPid] = /^pid=(\d+) LISTEN_PID=(\d+) fd3=socket:\[\d+\] steps=undefined$/.exec(said) ?? [];
      expect(said).toMatch(/^pid=/);
      expect(listenPid).toBe(pid);
      expect(pid).toBe(String(helper.pid)); // exec keeps the pid the spawn gave
    } finally {
      held.close();
    }
  });

  it("Node's IPC channel, above the sockets and the report channel, still carries process.send('ready')", async () => {
    const [port, statusPort] = await ports(2);
    const run = gsup([
      '-v',
      '--listen',
      `127.0.0.1:${port}`,
      '--wait-ready',
      '--status-port',
      String(statusPort),
      '--status-host',
      '127.0.0.1',
      '--',
      'node',
      APP,
      '--send-ready',
    ]);
    await run.ready('listen-app');
    expect(lineOf(run, /^ready /)).toMatch(/ LISTEN_FDS=1 .* channel=yes$/);
    await run.waitForLine(/the app said it is ready \(process\.send\('ready'\)\)/, { stream: 'stderr' });
    expect(await status(statusPort, '/readyz')).toEqual({ code: 200, body: 'ready\n' });
    run.signal('SIGTERM');
    await run.finished();
  });

  it("gsup's settings are not handed on: a nested gsup does not take GSUP_LISTEN (or any GSUP_* setting), nor hand on LISTEN_* it was handed (its Node closed those fds)", async () => {
    const [port] = await ports(1);
    const print = 'const e = process.env; console.log(`inner ${e.GSUP_LISTEN} ${e.GSUP_KILL_TIMEOUT} ${e.LISTEN_FDS}`)';
    const run = gsup(['--', process.execPath, GSUP, '--', 'node', '-e', print], {
      env: { GSUP_LISTEN: String(port), GSUP_KILL_TIMEOUT: '3s' },
    });
    // Had the inner gsup taken GSUP_LISTEN, it would have found the port in use: 125.
    expect((await run.finished()).code).toBe(0);
    expect(run.stdout).toEqual(['inner undefined undefined undefined']);
  });
});

describe('--listen: gsup never accepts, and restarts refuse nothing', () => {
  it('with no run the queue grows and gsup holds no connection; /metrics counts it; the end resets it', async () => {
    const [port, statusPort] = await ports(2);
    const run = gsup([
      '--listen',
      `web=127.0.0.1:${port}`,
      '--status-port',
      String(statusPort),
      '--status-host',
      '127.0.0.1',
      '--restart',
      'always',
      '--restart-delay',
      '30s',
      '--',
      'true',
    ]);
    await run.waitForLine(/restarting in 30\.00s/, { stream: 'stderr' });
    const clients: Socket[] = [];
    const ends: Array<Promise<string>> = [];
    for (let index = 0; index < 5; index++) {
      const client = connect({ port, host: '127.0.0.1' });
      clients.push(client);
      ends.push(
        new Promise((resolve) =>
          client
            .on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? '?'))
            .on('end', () => resolve('end')),
        ),
      );
      await new Promise((resolve) => client.once('connect', resolve));
    }
    const listening = () => socketsOnPort(port).find((socket) => socket.state === '0A');
    await waitFor(() => listening()?.rxQueue === 5, 'five connections in the queue');
    // The kernel completed them; none was accepted: an accepted connection has a file, and an inode.
    const established = socketsOnPort(port).filter((socket) => socket.state === '01');
    expect(established).toHaveLength(5);
    expect(established.map((socket) => socket.inode)).toEqual([0, 0, 0, 0, 0]);
    const gsupFds = readFdLinks(run.pid);
    expect(gsupFds).toContain(`socket:[${listening()!.inode}]`);
    const metrics = (await status(statusPort, '/metrics')).body;
    expect(metrics).toContain('# TYPE gsup_listen_queue gauge\ngsup_listen_queue{name="web"} 5\n');
    if (promtool()) {
      const dir = mkdtempSync(join(tmpdir(), 'gsup-test-'));
      try {
        writeFileSync(join(dir, 'metrics'), metrics);
        execFileSync('sh', ['-c', `promtool check metrics < ${join(dir, 'metrics')}`], { stdio: 'pipe' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    // No run follows: the socket is shut down, and what sat in its queue is reset.
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    expect(await Promise.all(ends)).toEqual(['ECONNRESET', 'ECONNRESET', 'ECONNRESET', 'ECONNRESET', 'ECONNRESET']);
    expect(await request(port)).toMatchObject({ outcome: 'refused' });
  });

  it('a run that calls shutdown() on the socket is noticed, and the socket bound again for the next run', async () => {
    const [port] = await ports(1);
    const flag = markerPath();
    const script = `if [ -e ${flag} ]; then exec python3 ${PY}; else touch ${flag}; exec python3 ${PY} shutdown; fi`;
    const run = gsup([
      '--listen',
      `127.0.0.1:${port}`,
      '--restart',
      'on-failure',
      '--restart-delay',
      '100ms',
      '--',
      'sh',
      '-c',
      script,
    ]);
    await run.waitForLine(/^shut down \(pid/);
    const pid = await run.ready('listen-app.py');
    expect(run.stderr).toContain(
      `[gsup] the held socket ${port} (127.0.0.1:${port}) was no longer listening after run 1: bound again`,
    );
    expect(run.stdout.filter((line) => line.startsWith('fd 3 ')).at(-1)).toContain(`port=${port} listening=1`);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pid} fd 3\n` });
    run.signal('SIGTERM');
    await run.finished();
  });

  it('after a Node run (which made the socket non-blocking for every holder) a blocking accept(2) works', async () => {
    const [port] = await ports(1);
    const flag = markerPath();
    const script = `if [ -e ${flag} ]; then exec python3 ${PY}; else touch ${flag}; exec node ${APP} --crash-after 100; fi`;
    const args = ['--listen', `127.0.0.1:${port}`, '--no-listen-preload', '--restart', 'on-failure'];
    const run = gsup([...args, '--restart-delay', '100ms', '--', 'sh', '-c', script]);
    await run.ready('listen-app');
    const pid = await run.ready('listen-app.py');
    // It blocks in accept(2) and serves on (a non-blocking socket would fail its first accept: a crash loop).
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let request_ = 0; request_ < 3; request_++)
      expect(await request(port)).toEqual({ outcome: 'ok', body: `${pid} fd 3\n` });
    expect(run.count(/^ready \(pid: \d+, listen-app\.py\)/)).toBe(1);
    run.signal('SIGTERM');
    await run.finished();
  });

  it('crash-restarts under load (20 clients, one connection a request, two crashes in 4 s): 0 refused', async () => {
    const [port] = await ports(1);
    const count = markerPath();
    // Runs 1 and 2 crash 1.3 s after they listen; run 3 serves on.
    const script =
      `n=$(cat ${count} 2>/dev/null || echo 0); echo $((n + 1)) > ${count}; ` +
      `if [ "$n" -lt 2 ]; then exec node ${APP} --crash-after 1300; else exec node ${APP}; fi`;
    const args = [
      '--listen',
      `127.0.0.1:${port}`,
      '--no-listen-preload',
      '--restart',
      'always',
      '--restart-delay',
      '100ms',
    ];
    const run = gsup([...args, '--', 'sh', '-c', script]);
    await run.ready('listen-app');
    // The load goes on until the third run has served a while (4 s or so; longer when the machine is slow).
    const runs = () => run.count(/^ready \(pid: \d+, listen-app\)/);
    let thirdAt: number | undefined;
    const done = () => {
      if (thirdAt === undefined && runs() >= 3) thirdAt = Date.now();
      return thirdAt !== undefined && Date.now() - thirdAt > 500;
    };
    const counts = await load(port, 20, 20_000, done);
    console.log(`crash-restarts under load with --listen: ${JSON.stringify(counts)}`);
    expect(runs()).toBe(3);
    expect(counts.refused).toBe(0);
    expect(counts.timeout).toBe(0);
    expect(counts.ok).toBeGreaterThan(100);
    run.signal('SIGTERM');
    await run.finished();
  });

  it('a new gsup on the same port right after a stop under load starts at once', async () => {
    const [port] = await ports(1);
    const args = ['--listen', `127.0.0.1:${port}`, '--no-listen-preload', '--', 'node', APP];
    const first = gsup(args);
    await first.ready('listen-app');
    const loading = load(port, 10, 1500);
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.signal('SIGTERM');
    await first.finished();
    const second = gsup(args);
    const pid = await second.ready('listen-app');
    await loading;
    expect(second.exit).toBeUndefined();
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${pid}\n` });
    second.signal('SIGTERM');
    await second.finished();
  });
});

describe('--listen: a held socket nobody takes', () => {
  it('a run that took one of two held sockets is warned of the other, once, 10 s after its start', async () => {
    const [web, admin] = await ports(2);
    const held = ['--listen', `web=127.0.0.1:${web}`, '--listen', `admin=127.0.0.1:${admin}`];
    const run = gsup([...held, '--', 'node', fixture('reload-app.js'), '--port', `${web}`]);
    await run.ready('reload-app');
    const warning = /run 1 has not taken the held socket\(s\) admin (\S+) after its start \(it took web\)/;
    const match = await run.waitForLine(warning, { stream: 'stderr', timeoutMs: 20_000 });
    const after = Number(/^([\d.]+)s$/.exec(match[1])?.[1]);
    expect(after).toBeGreaterThanOrEqual(10);
    // Samples go on (every 2 s by then) and say nothing more: one line, not one a sample.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
    const untaken = /has not taken the held socket|has taken no held socket|without any process taking/;
    expect(
      run.stderr.filter((each) => untaken.test(each)),
      run.transcript(),
    ).toEqual([match.input]);
  });
});

describe('--listen: the final stop', () => {
  it('no run follows (--on-exit exit): a process left behind with the socket does not keep it listening', async () => {
    const [port] = await ports(1);
    const script = `node ${fixture('printer.js')} --label stray & exit 0`;
    const run = gsup([
      '--listen',
      `127.0.0.1:${port}`,
      '--no-listen-preload',
      '--on-exit',
      'exit',
      '--',
      'sh',
      '-c',
      script,
    ]);
    const stray = await run.ready('stray');
    expect((await run.finished()).code).toBe(0);
    // gsup is gone; the stray process still holds fd 3, but the socket was shut down: refused, not queued.
    expect(readlinkSync(`/proc/${stray}/fd/3`)).toMatch(/^socket:\[\d+\]$/);
    expect(await request(port, '127.0.0.1', 1000)).toMatchObject({ outcome: 'refused' });
    process.kill(stray, 'SIGKILL');
    // SIGKILL is delivered, not done, when kill() returns: the leak check must not find it still dying.
    await waitFor(() => !isAlive(stray), 'the stray to die');
  });

  it("behind sh -c 'node app.js; true', new connections are refused once the app closed its listener", async () => {
    const [port] = await ports(1);
    // The shell ignores SIGTERM and holds fd 3 while the app lingers: only a shutdown() stops its listening.
    const script = `trap '' TERM; node ${APP} --report --linger 3000; true`;
    const run = gsup(['--listen', `127.0.0.1:${port}`, '--no-listen-preload', '--', 'sh', '-c', script]);
    const app = await run.ready('listen-app');
    const shell = Number(readFileSync(`/proc/${app}/stat`, 'latin1').split(') ')[1].split(' ')[1]);
    expect(await request(port)).toEqual({ outcome: 'ok', body: `${app}\n` });
    run.signal('SIGTERM');
    await run.waitForLine(/^closed \(pid/);
    // The app closed its server and said so: gsup shuts the socket down, for every holder.
    let outcome = '';
    const deadline = Date.now() + 2000;
    while (outcome !== 'refused' && Date.now() < deadline) outcome = (await request(port, '127.0.0.1', 300)).outcome;
    expect(outcome).toBe('refused');
    // Refused while the app lingers and the shell still holds fd 3 (where connections would otherwise queue).
    expect(isAlive(app)).toBe(true);
    expect(readlinkSync(`/proc/${shell}/fd/3`)).toMatch(/^socket:\[\d+\]$/);
    expect((await run.finished()).code).toBe(0);
  });
});

function readFdLinks(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
    } catch {
      return []; // closed meanwhile
    }
  });
}

function promtool(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
