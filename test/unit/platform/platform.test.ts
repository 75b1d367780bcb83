import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { linuxPlatform } from '../../../src/platform/linux/platform.js';
import { parseStat } from '../../../src/platform/linux/proc/stat.js';
import { environValue } from '../../../src/platform/linux/proc/environ.js';
import { parsePsLine, posixPlatform } from '../../../src/platform/posix/platform.js';
import { interpreterOf, koffiPlaces, libcOf } from '../../../src/platform/linux/koffi.js';
import { forAnyone } from '../../helpers/anyone.js';
import { ROOT } from '../../helpers/gsup.js';
import { currentPlatform, isAlive, type ProcessInfo } from '../../../src/platform/index.js';
import { moduleFile, PLAIN_PATH } from '../../../src/platform/builtins.js';
import { waitFor } from '../../helpers/proc.js';

describe("a module's file from its URL (moduleFile)", () => {
  it.each([
    '/usr/lib/node_modules/gsup/dist/cli.cjs',
    '/home/a b/gsup/dist/cli.cjs', // encoded by pathToFileURL: read back by node:url
    '/opt/g%20s#u?p/café/dist/cli.cjs',
    '/x/@scope/gsup/dist/index.js',
  ])('%s: the file the URL names, as node:url reads it', (path) => {
    const url = pathToFileURL(path).href;
    expect(moduleFile(url)).toBe(path);
  });

  it('a plain path as the CommonJS bundles write it (scripts/build.js: `file://` and the path)', () => {
    // The build's banner has the rule as text in a string (its backslashes doubled): the same rule as moduleFile's.
    const build = readFileSync(join(ROOT, 'scripts', 'build.js'), 'utf8');
    expect(build).toContain(`/${PLAIN_PATH.source.replaceAll('\\', '\\\\')}/.test(__filename)`);
    const banner = (file: string) => (PLAIN_PATH.test(file) ? `file://${file}` : pathToFileURL(file).href);
    const files = [
      '/usr/lib/node_modules/gsup/dist/cli.cjs',
      '/p/.pnpm/gsup@1.0.0+x/node_modules/@s/gsup/dist/cli.cjs',
    ];
    for (const file of [...files, '/tmp/x y/dist/cli.cjs', '/tmp/g~h/dist/cli.cjs']) {
      expect(banner(file)).toBe(pathToFileURL(file).href);
      expect(moduleFile(banner(file))).toBe(file);
    }
  });
});

describe('/proc/PID/stat', () => {
  it('reads state, ppid, pgid, session and start time, whatever the command name holds', () => {
    const stat = '4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 ...';
    expect(parseStat(4242, stat)).toEqual({
      pid: 4242,
      name: 'my (odd) name',
      state: 'S',
      ppid: 1,
      pgid: 4242,
      sid: 4242,
      startTime: 987654,
    });
  });

  it('reads every process here as splitting its line would; a cut line is none', async () => {
    const all = await linuxPlatform.listProcesses();
    expect(all.length).toBeGreaterThan(1);
    for (const info of all.slice(0, 200)) {
      let text: string;
      try {
        text = readFileSync(`/proc/${info.pid}/stat`, 'latin1');
      } catch {
        continue; // gone meanwhile
      }
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const [ppid, pgid, sid, startTime] = [1, 2, 3, 19].map((index) => Number(fields[index]));
      expect(parseStat(info.pid, text)).toEqual({ pid: info.pid, name, state: fields[0], ppid, pgid, sid, startTime });
    }
    expect(parseStat(1, '1 (init) S 0 1 1 0 -1')).toBeUndefined();
    expect(parseStat(1, '1 (init')).toBeUndefined();
  });

  it('reads this process, and knows a zombie is not alive', async () => {
    const self = await linuxPlatform.processInfo(process.pid);
    expect(self).toMatchObject({ pid: process.pid, ppid: process.ppid, state: expect.stringMatching(/[RS]/) });
    expect(isAlive(self)).toBe(true);
    expect(isAlive({ ...self!, state: 'Z' })).toBe(false);
    expect(await linuxPlatform.processInfo(2 ** 30)).toBeUndefined();
    expect(await linuxPlatform.readCommandLine(process.pid)).toContain('node');
    expect(await linuxPlatform.readCommandLine(2 ** 30)).toBeUndefined();
  });

  it('lists processes quickly: this one among them', async () => {
    const all = await linuxPlatform.listProcesses();
    expect(all.some((info) => info.pid === process.pid)).toBe(true);
  });
});

describe('the platform of this machine', () => {
  it('is /proc here, whatever the environment says: no test hook in what users run', () => {
    const before = process.env.GSUP_PLATFORM;
    process.env.GSUP_PLATFORM = 'posix';
    try {
      expect(currentPlatform()).toBe(linuxPlatform);
    } finally {
      if (before === undefined) delete process.env.GSUP_PLATFORM;
      else process.env.GSUP_PLATFORM = before;
    }
  });
});

describe('ps output', () => {
  it('parses a line of `ps -o pid=,ppid=,pgid=,stat=,lstart=`', () => {
    expect(parsePsLine('  123   1   123 Ss   Sun Nov 22 12:00:01 2026')).toMatchObject({
      pid: 123,
      ppid: 1,
      pgid: 123,
      state: 'S',
    });
    expect(parsePsLine('  124 123   123 Z+   Sun Nov 22 12:00:02 2026')?.state).toBe('Z');
    expect(parsePsLine('garbage')).toBeUndefined();
  });
});

describe.each([
  ['linux (pidfd)', linuxPlatform],
  ['posix (ps, start time re-read)', posixPlatform],
])('process identity, %s: a signal reaches the process seen, never another with its number', (_name, platform) => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  /** A real process in a group of its own that prints each signal it gets. */
  async function target(): Promise<{ info: ProcessInfo; signals: string[] }> {
    const child = spawn(
      process.execPath,
      ['-e', "process.on('SIGUSR2', () => console.log('SIGUSR2')); console.log('ready'); setInterval(() => {}, 1000)"],
      {
        detached: true,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    children.push(child);
    const signals: string[] = [];
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      for (const line of text.split('\n').filter(Boolean)) line === 'ready' ? ready() : signals.push(line);
    });
    await isReady;
    const info = (await platform.processInfo(child.pid!))!;
    return { info, signals };
  }

  it('the same start time: signalled; another start time (a reused pid): not, and nothing reaches it', async () => {
    const { info, signals } = await target();
    expect(platform.signalProcesses([{ ...info, startTime: info.startTime + 1 }], 'SIGUSR2')).toBe(0);
    expect(platform.signalGroup({ ...info, startTime: info.startTime + 1 }, 'SIGUSR2')).toBe(false);
    expect(platform.signalProcesses([info], 'SIGUSR2')).toBe(1);
    await waitFor(() => signals.length === 1, 'the signal to arrive');
    expect(platform.signalGroup(info, 'SIGUSR2')).toBe(true);
    await waitFor(() => signals.length === 2, 'the group signal to arrive');
    expect(signals).toEqual(['SIGUSR2', 'SIGUSR2']);
  });

  it('a process that is gone (reaped): nothing is signalled', async () => {
    const { info } = await target();
    const child = children.pop()!;
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(platform.signalProcesses([info], 'SIGTERM')).toBe(0);
    expect(platform.signalGroup(info, 'SIGTERM')).toBe(false);
  });
});

describe('/proc/PID/environ: one variable of the environment a process started with', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  const sleeper = (env: NodeJS.ProcessEnv) => {
    const child = spawn('sleep', ['30'], { env, stdio: 'ignore' });
    children.push(child);
    return child.pid!;
  };

  it('found, absent, or gone: each told apart (a large environment searched whole)', async () => {
    const pid = sleeper({ GSUP_RUN: 'a.1 b.2', GSUP_RUNNER: 'no' });
    expect(await environValue(pid, 'GSUP_RUN')).toEqual({ found: 'value', value: 'a.1 b.2' });
    expect(await environValue(pid, 'GSUP')).toEqual({ found: 'absent' });
    expect(await environValue(pid, 'NOPE')).toEqual({ found: 'absent' });
    // Past the first 64 KiB read: the variable after 120 KiB of others (one string may hold 128 KiB at most).
    const large = sleeper({ PAD1: 'x'.repeat(60 * 1024), PAD2: 'y'.repeat(60 * 1024), GSUP_RUN: 'c.3' });
    expect(await environValue(large, 'GSUP_RUN')).toEqual({ found: 'value', value: 'c.3' });
    // Reads at once (each with its own buffer), and again (the buffers used again): the same answers.
    const again = await Promise.all([pid, large, pid, large, pid, large].map((each) => environValue(each, 'GSUP_RUN')));
    expect(again.map((read) => (read.found === 'value' ? read.value : read.found))).toEqual([
      'a.1 b.2',
      'c.3',
      'a.1 b.2',
      'c.3',
      'a.1 b.2',
      'c.3',
    ]);
    const child = children.pop()!;
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await environValue(large, 'GSUP_RUN')).toEqual({ found: 'gone' });
  });

  const setpriv = spawnSync('setpriv', ['--version']).status === 0 && process.getuid?.() === 0;
  it.skipIf(!setpriv)('unreadable (another user’s process, read without CAP_SYS_PTRACE): not absent', () => {
    // Read as uid 65534: this process (root's) is not its to read. The reader bundled whole, where that user can
    // read it (the checkout may sit in a folder only root can enter).
    const reader =
      `import { environValue } from ${JSON.stringify(join(ROOT, 'src/platform/linux/proc/environ.ts'))};\n` +
      `console.log(JSON.stringify(await environValue(${process.pid}, 'PATH')));\n`;
    const copy = forAnyone({ bundles: { 'read.mjs': reader } });
    const read = spawnSync(
      'setpriv',
      ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, join(copy.path, 'read.mjs')],
      { encoding: 'utf8', cwd: '/' },
    );
    expect(read.stderr).toBe('');
    expect(JSON.parse(read.stdout)).toEqual({ found: 'unreadable', why: 'EACCES' });
  });
});

describe('gsup’s children outside a group, from the main thread’s children file (the signal path asks)', () => {
  const children: ChildProcess[] = [];
  const folders: string[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  /** A sleeping child, in this process's group or (detached) a group of its own, under an odd name. */
  async function sleeper(detached: boolean): Promise<number> {
    // A name with ')' and spaces, as a stat line's second field holds it: the last ')' ends it.
    folders.push(mkdtempSync(join(tmpdir(), 'gsup-children-')));
    const odd = join(folders.at(-1)!, 'odd) 7 7 x');
    symlinkSync('/bin/sleep', odd);
    const child = spawn(odd, ['30'], { detached, stdio: 'ignore' });
    children.push(child);
    await waitFor(() => readFileSync(`/proc/${child.pid}/comm`, 'latin1') === 'odd) 7 7 x\n', 'the exec');
    return child.pid!;
  }

  it('a live child not known and not in the group: yes; known, or in the group: no', async () => {
    const own = (await linuxPlatform.processInfo(process.pid))!.pgid;
    const inGroup = await sleeper(false);
    const apart = await sleeper(true);
    const others = new Set(linuxPlatform.ownChildren!()!.filter((pid) => pid !== inGroup && pid !== apart));
    expect(linuxPlatform.childOutside!(new Set([...others, inGroup]), own)).toBe(true);
    expect(linuxPlatform.childOutside!(new Set([...others, apart]), own)).toBe(false);
    expect(linuxPlatform.childOutside!(new Set([...others, apart]), undefined)).toBe(true);
    expect(linuxPlatform.childOutside!(new Set([...others, inGroup]), apart)).toBe(false);
    expect(linuxPlatform.childOutside!(new Set([...others, inGroup, apart]), undefined)).toBe(false);
  });
});

describe('koffi’s binary: only from gsup’s own package, the build for node’s C library first', () => {
  const fromDist = (root: string) => pathToFileURL(join(root, 'dist/cli.cjs')).href;

  it('glibc first on glibc, musl first on musl (Alpine): both builds of the platform’s package, nothing else', () => {
    expect(koffiPlaces(fromDist('/opt/gsup'), 'linux', 'x64', 'glibc')).toEqual([
      '/opt/gsup/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node',
      '/opt/gsup/node_modules/@koromix/koffi-linux-x64/musl_x64/koffi.node',
    ]);
    expect(koffiPlaces(fromDist('/opt/gsup'), 'linux', 'arm64', 'musl')).toEqual([
      '/opt/gsup/node_modules/@koromix/koffi-linux-arm64/musl_arm64/koffi.node',
      '/opt/gsup/node_modules/@koromix/koffi-linux-arm64/linux_arm64/koffi.node',
    ]);
  });

  it('installed as a dependency: also the node_modules gsup is in (where npm puts its dependencies), never one above it', () => {
    const places = koffiPlaces(fromDist('/app/node_modules/@acme/gsup'), 'linux', 'x64', 'musl');
    expect(places).toEqual([
      '/app/node_modules/@acme/gsup/node_modules/@koromix/koffi-linux-x64/musl_x64/koffi.node',
      '/app/node_modules/@acme/gsup/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node',
      '/app/node_modules/@koromix/koffi-linux-x64/musl_x64/koffi.node',
      '/app/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node',
    ]);
    // A clone anywhere: its own node_modules alone (not /tmp/@koromix, not /tmp/node_modules).
    expect(
      koffiPlaces(fromDist('/tmp/gsup'), 'linux', 'x64', undefined).every((path) =>
        path.startsWith('/tmp/gsup/node_modules/'),
      ),
    ).toBe(true);
    // Run from source (the tests): the checkout's node_modules, from a file at any depth of src/.
    for (const file of ['src/platform/linux/native.ts', 'src/platform/linux/process/stderr.ts', 'src/cli/inbox.ts']) {
      expect(koffiPlaces(pathToFileURL(join(ROOT, file)).href, 'linux', 'x64', 'glibc')[0]).toBe(
        join(ROOT, 'node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node'),
      );
    }
  });

  it('tells the C library by node’s ELF interpreter', () => {
    const elf = (interpreter: string) => {
      // A 64-bit little-endian ELF header whose one program header is PT_INTERP.
      const head = Buffer.alloc(512);
      head.writeUInt32BE(0x7f454c46, 0);
      head[4] = 2;
      head[5] = 1;
      head.writeBigUInt64LE(64n, 32);
      head.writeUInt16LE(56, 54);
      head.writeUInt16LE(1, 56);
      head.writeUInt32LE(3, 64);
      head.writeBigUInt64LE(200n, 72);
      head.writeBigUInt64LE(BigInt(interpreter.length + 1), 96);
      head.write(`${interpreter}\0`, 200, 'latin1');
      return head;
    };
    expect(interpreterOf(elf('/lib/ld-musl-x86_64.so.1'))).toBe('/lib/ld-musl-x86_64.so.1');
    expect(interpreterOf(elf('/lib64/ld-linux-x86-64.so.2'))).toBe('/lib64/ld-linux-x86-64.so.2');
    expect(interpreterOf(Buffer.from('#!/bin/sh\n'))).toBeUndefined();
    expect(libcOf(process.execPath)).toBe(
      existsSync('/lib/ld-musl-x86_64.so.1') || existsSync('/lib/ld-musl-aarch64.so.1') ? 'musl' : 'glibc',
    );
  });
});
