import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPreload } from '../../src/engine/listen/node-options.js';
import { installPreload } from '../../src/engine/listen/preload-file.js';
import { Logger } from '../../src/output/log.js';
import { fixture, Run, tempDir } from '../helpers/gsup.js';
import { ask, holding, listeners, PRELOAD, somaxconn, type Holding, type Kind } from '../helpers/hold-listen.js';
import { freePort } from '../helpers/net.js';
import { forAnyone } from '../helpers/anyone.js';

// The listen preload (src/listen-preload.ts) in unchanged Node apps, with what gsup --listen hands a run made
// by fixtures/hold-listen.py (which binds, listens with somaxconn, and never accepts): an answer on the held
// port can only come from a process that took the held socket.

const APP = fixture('preload-app.js');
const ENV_TS = fixture('preload-env.ts');
const certs = tempDir();
const TLS = { TLS_KEY: join(certs.path, 'key.pem'), TLS_CERT: join(certs.path, 'cert.pem') };

beforeAll(() => {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'].concat([
      '-subj',
      '/CN=localhost',
      '-keyout',
      TLS.TLS_KEY,
      '-out',
      TLS.TLS_CERT,
    ]),
    { stdio: 'ignore' },
  );
  // The first tsx run compiles: here, not in a test.
  execFileSync('npx', ['tsx', ENV_TS, '--exit-now'], { stdio: 'ignore', timeout: 60_000 });
}, 90_000);
afterAll(() => certs.remove());

/** The app's pid, once it listens (or failed to). */
async function listening(held: Holding, label = 'preload-app'): Promise<number> {
  const pid = await held.run.ready(label);
  await held.run.waitForLine(new RegExp(`^(listening|error) \\(pid: ${pid}`));
  return pid;
}

/** SIGTERM to the app, and the holder's end: every report said by then. */
async function stop(held: Holding, pid: number): Promise<void> {
  process.kill(pid, 'SIGTERM');
  const exit = await held.run.finished();
  expect(exit.code, held.run.transcript()).toBe(0);
}

const reports = (held: Holding) => held.run.stdout.filter((line) => line.startsWith('report '));

/** The one listening socket on the held port is the held one, and the app holds it, with gsup's backlog. */
function servedByHeld(held: Holding, pid: number): void {
  const found = listeners(held.port);
  expect(found, held.run.transcript()).toHaveLength(1);
  expect(found[0].ino).toBe(held.ino);
  expect(found[0].pids).toContain(pid);
  expect(found[0].backlog).toBe(somaxconn());
}

describe('taken over: a listen on the held port becomes a listen on the held socket', () => {
  it.each<[Kind, string, string?]>([
    ['net', 'port'],
    ['http', 'options'],
    ['https', 'port'],
    ['http2', 'port'],
    ['http2s', 'options'],
  ])(
    '%s, listen %s: answers from the app, on the held socket, backlog unchanged; reports listen, then close',
    async (kind, form) => {
      const held = await holding(['node', APP, kind, form], { env: TLS });
      const pid = await listening(held);
      expect(held.run.stdout).toContain(`listening (pid: ${pid}, port: ${held.port}, address: ::)`);
      expect(await ask(kind, held.port)).toBe(`pid ${pid}`);
      servedByHeld(held, pid);
      await stop(held, pid);
      const name = String(held.port);
      expect(reports(held)).toEqual([
        `report {"word":"listen","name":"${name}","pid":${pid}}`,
        `report {"word":"close","name":"${name}","pid":${pid}}`,
      ]);
      expect(held.run.stderr, held.run.transcript()).toEqual([]);
    },
  );

  it.each([
    ['port-host', '0.0.0.0'],
    ['options-host', '127.0.0.1'],
    ['port-host', 'localhost'],
  ])('listen %s %s (inside the held [::]): taken over, with one warning naming both', async (form, host) => {
    const held = await holding(['node', APP, 'http', form, host]);
    const pid = await listening(held);
    expect(await ask('http', held.port, '127.0.0.1')).toBe(`pid ${pid}`);
    servedByHeld(held, pid);
    const warnings = held.run.stderr.filter(Boolean);
    expect(warnings, held.run.transcript()).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(`^\\[gsup\\] listen preload \\(pid ${pid}\\): listen on \\S+:${held.port} takes the held socket `),
    );
    expect(warnings[0]).toContain(`[::]:${held.port} (${held.port}): --listen decides exposure`);
    await stop(held, pid);
  });

  // Round-robin (Linux's default): the primary listens, and hands connections to the workers. `none`: the
  // primary makes the handle, and each worker listens on it itself, with its own backlog (Node's 511).
  it.each([
    ['rr', somaxconn()],
    ['none', 511],
  ])(
    'a cluster primary with two workers (NODE_CLUSTER_SCHED_POLICY=%s): the primary takes the socket, each worker answers through it',
    async (policy, backlog) => {
      const held = await holding(['node', fixture('preload-cluster.js')], {
        env: { NODE_CLUSTER_SCHED_POLICY: policy },
      });
      const primary = await held.run.ready('preload-cluster');
      const [, a, b] = await held.run.waitForLine(/^workers listening \(pids: (\d+) (\d+)\)/);
      const answers = new Set<string>();
      for (let attempt = 0; attempt < 40 && answers.size < 2; attempt++) answers.add(await ask('http', held.port));
      expect([...answers].sort()).toEqual([`pid ${a}`, `pid ${b}`].sort());
      const found = listeners(held.port);
      expect(found).toHaveLength(1);
      expect(found[0].ino).toBe(held.ino);
      expect(found[0].pids).toContain(primary);
      if (policy === 'rr') expect(found[0].pids).not.toContain(Number(a));
      expect(found[0].backlog).toBe(backlog);
      await stop(held, primary);
      expect(reports(held)).toEqual([
        `report {"word":"listen","name":"${held.port}","pid":${primary}}`,
        `report {"word":"close","name":"${held.port}","pid":${primary}}`,
      ]);
    },
  );
});

describe('left alone', () => {
  it('another port, and listen(0): the app binds a socket of its own, and says no word', async () => {
    for (const form of ['port', 'zero']) {
      const other = await freePort();
      const held = await holding(['node', APP, 'net', form], { env: form === 'port' ? { PORT: String(other) } : {} });
      const pid = await listening(held);
      const [, port] = await held.run.waitForLine(/^listening \(pid: \d+, port: (\d+)/);
      expect(Number(port)).not.toBe(held.port);
      expect(await ask('net', Number(port))).toBe(`pid ${pid}`);
      // (the app has the held socket at fd 3 all the same: inherited, not listened on)
      expect(listeners(Number(port)).map((listener) => listener.ino)).not.toContain(held.ino);
      await stop(held, pid);
      expect(reports(held)).toEqual([]);
    }
  });

  it('a host outside the held address (127.0.0.2 beside a held 127.0.0.1): its own socket, no word', async () => {
    const held = await holding(['node', APP, 'net', 'port-host', '127.0.0.2'], {
      addresses: (port) => [`127.0.0.1:${port}`],
    });
    const pid = await listening(held);
    expect(await ask('net', held.port, '127.0.0.2')).toBe(`pid ${pid}`);
    const found = listeners(held.port);
    expect(found).toHaveLength(2);
    expect(found.find((listener) => listener.ino !== held.ino)?.pids).toEqual([pid]);
    await stop(held, pid);
    expect(reports(held)).toEqual([]);
    expect(held.run.stderr.filter(Boolean)).toEqual([]);
  });

  it('a second server on the held port in the same process: left to Node (EADDRINUSE, as without gsup), one line', async () => {
    const held = await holding(['node', APP, 'net', 'twice']);
    const pid = await held.run.ready('preload-app');
    await held.run.waitForLine(new RegExp(`^error \\(pid: ${pid}, code: EADDRINUSE, second\\)`));
    expect(await ask('net', held.port)).toBe(`pid ${pid}`);
    expect(held.run.stderr.filter(Boolean)).toEqual([
      `[gsup] listen preload (pid ${pid}): listen on every interface:${held.port} left to Node: the held socket ` +
        `[::]:${held.port} (${held.port}) is taken (another server of this process listens on it)`,
    ]);
    await stop(held, pid);
  });
});

describe('behind wrappers: each Node process hands the sockets on', () => {
  it("npx tsx app.ts: the app takes the socket, reads LISTEN_PID as its own pid, and the app's own NODE_OPTIONS still work", async () => {
    const env = { NODE_OPTIONS: withPreload(`--require ${fixture('preload.cjs')}`, PRELOAD) };
    const held = await holding(['npx', 'tsx', ENV_TS], { env });
    const pid = await listening(held, 'preload-env');
    expect(held.run.stdout).toContain(`env (pid: ${pid}, LISTEN_PID: ${pid}, LISTEN_FDS: 1, fd3: ${held.id})`);
    expect(await ask('http', held.port)).toBe(`pid ${pid}`);
    servedByHeld(held, pid);
    expect(held.run.stderr).toContain(`preload loaded (pid: ${pid})`);
    await stop(held, pid);
    expect(reports(held)).toHaveLength(2);
  });

  it.each([
    ['sh -c (no exec)', ['sh', '-c', `node ${APP} http port; true`]],
    ['an npm script', ['npm', 'run', '--silent', 'serve']],
  ])('%s', async (_, command) => {
    const dir = tempDir();
    try {
      writeFileSync(
        join(dir.path, 'package.json'),
        JSON.stringify({ name: 'app', private: true, scripts: { serve: `node ${APP} http port` } }),
      );
      const held = await holding(command, { cwd: dir.path });
      const pid = await listening(held);
      expect(await ask('http', held.port)).toBe(`pid ${pid}`);
      servedByHeld(held, pid);
      await stop(held, pid);
      expect(reports(held)).toHaveLength(2);
    } finally {
      dir.remove();
    }
  });
});

describe('handing on: which children get the sockets', () => {
  /** Each probe's line, by its tag. */
  const probes = (run: Run) =>
    new Map(
      run.stdout.flatMap((line) => {
        const match = /^probe \(pid: (\d+), tag: (\S+), (.*)\)$/.exec(line);
        return match ? [[match[2], { pid: Number(match[1]), seen: match[3] }] as const] : [];
      }),
    );

  it('spawn, fork (its IPC moved above the sockets, still working), exec and execFileSync get them; a child with fds of its own at 3, one started as another user, a pm2 command, and every child after the take-over get none, nor any LISTEN_*', async () => {
    const modes = ['plain', 'own-fds', 'other-user', 'fork', 'sync', 'exec', 'pm2', 'listen', 'after'];
    // From a copy every user can read: the child started as uid 65534 loads the probe and the preload too.
    const copy = forAnyone({ gsup: true, fixtures: ['preload-spawner.js', 'preload-probe.js'] });
    const preload = `--require "${join(copy.path, 'dist', 'listen-preload.cjs')}"`;
    const held = await holding(['node', copy.fixture('preload-spawner.js'), ...modes], {
      env: { NODE_OPTIONS: preload },
    });
    const spawner = await held.run.ready('preload-spawner');
    await held.run.waitForLine(/^done$/);
    const seen = probes(held.run);
    const given = (pid: number) =>
      `LISTEN_FDS: 1, LISTEN_PID: ${pid}, GSUP_LISTEN_ID: ${held.id}@${held.address}, GSUP_REPORT_FD: 4, fd3: ${held.id} socket`;
    for (const tag of ['plain', 'fork', 'sync', 'exec']) {
      const probe = seen.get(tag);
      expect(probe?.seen, held.run.transcript()).toBe(`${given(probe!.pid)}, ipc: ${tag === 'fork' ? 'yes' : 'no'}`);
    }
    expect(held.run.stdout).toContain(`pong (pid: ${seen.get('fork')!.pid}, tag: fork)`);
    for (const tag of ['own-fds', 'other-user', 'pm2', 'after']) {
      const probe = seen.get(tag)?.seen;
      expect(probe, held.run.transcript()).toMatch(
        /^LISTEN_FDS: -, LISTEN_PID: -, GSUP_LISTEN_ID: -, GSUP_REPORT_FD: -, fd3: (\d+):(\d+) \w+, ipc: no$/,
      );
      expect(probe).not.toContain(held.id);
    }
    const exit = await held.run.finished();
    expect(exit.code, held.run.transcript()).toBe(0);
    expect(reports(held)).toEqual([
      `report {"word":"listen","name":"${held.port}","pid":${spawner}}`,
      `report {"word":"close","name":"${held.port}","pid":${spawner}}`,
    ]);
    expect(held.run.stderr.filter(Boolean), held.run.transcript()).toEqual([]);
  });

  it('fds 3… that are not the held sockets are not trusted: one line, and the app sees no LISTEN_*', async () => {
    const held = await holding(['node', fixture('preload-probe.js'), 'untrusted'], { holder: ['--wrong-id'] });
    const exit = await held.run.finished();
    expect(exit.code, held.run.transcript()).toBe(0);
    const probe = probes(held.run).get('untrusted');
    expect(probe?.seen).toMatch(/^LISTEN_FDS: -, LISTEN_PID: -, GSUP_LISTEN_ID: -, GSUP_REPORT_FD: -, fd3: /);
    expect(held.run.stderr.filter(Boolean)).toEqual([
      `[gsup] listen preload (pid ${probe!.pid}): the held sockets are not used: fd 3 is another socket ` +
        `(${held.id}, not ${held.id.split(':')[0]}:1, [::]:${held.port})`,
    ]);
  });
});

describe("the preload's file, as gsup installs it", () => {
  it('NODE_OPTIONS quoting as Node reads it: a path with spaces, quotes and backslashes loads', () => {
    const dir = tempDir();
    try {
      const odd = join(dir.path, 'a "b" \\c d');
      mkdirSync(odd);
      copyFileSync(fixture('preload.cjs'), join(odd, 'p.cjs'));
      const ran = spawnSync(process.execPath, ['-e', 'process.stdout.write("ran")'], {
        env: {
          ...process.env,
          PRELOAD_NO_HANDLER: '1',
          NODE_OPTIONS: withPreload('--no-warnings', join(odd, 'p.cjs')),
        },
        encoding: 'utf8',
      });
      expect(ran.stdout, ran.stderr).toBe('ran');
      expect(ran.stderr).toBe(`preload loaded (pid: ${ran.pid})\n`);
    } finally {
      dir.remove();
    }
  });

  it('a file that is gone (and has no safe place again) costs one line, never the app’s start', async () => {
    const lines: string[] = [];
    const logger = new Logger({ write: (line) => lines.push(line) });
    // The package's file as from a checkout under /tmp (not safe), root's folder under /run (as /run/gsup is).
    const pkg = tempDir();
    const run = mkdtempSync('/run/gsup-e2e-');
    try {
      chmodSync(run, 0o755);
      copyFileSync(PRELOAD, join(pkg.path, 'listen-preload.cjs'));
      const preload = installPreload(logger, { source: join(pkg.path, 'listen-preload.cjs'), run, runtime: undefined });
      if (typeof preload === 'string') throw new Error(preload);
      const gone = preload.path!;
      expect(dirname(gone)).toBe(join(run, 'gsup'));
      // A later spawn's look (the start's first, in the install's own turn, takes the install's check).
      await new Promise((resolve) => setImmediate(resolve));
      rmSync(dirname(gone), { recursive: true });
      chmodSync(run, 0o777); // open to all now: no file goes there again
      const nodeOptions = preload.nodeOptions(undefined);
      expect(nodeOptions).toBeUndefined();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/ is gone, and no safe place for it \(.*\): runs start without the preload/);
      const held = await holding(['node', APP, 'net', 'zero'], { env: { NODE_OPTIONS: nodeOptions } });
      await stop(held, await listening(held));
      // What the check spares the app: Node does not start with a preload it cannot load.
      const without = spawnSync(process.execPath, ['-e', '0'], {
        env: { ...process.env, NODE_OPTIONS: withPreload(undefined, gone) },
      });
      expect(without.status).not.toBe(0);
    } finally {
      pkg.remove();
      rmSync(run, { recursive: true, force: true });
    }
  });
});
