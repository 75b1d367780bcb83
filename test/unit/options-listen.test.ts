import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseCommandLine } from '../../src/options/cli-options.js';
import * as flags from '../../src/options/flags.js';
import { SETTINGS, withoutSettings } from '../../src/options/environment.js';
import { ROOT } from '../helpers/gsup.js';

// --listen and --no-listen-preload as the command line and the environment give them; gsup's settings kept
// from the command's environment.

async function parse(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const request = await parseCommandLine(argv, env, '0.0.0', () => {});
  if (request.kind !== 'run') throw new Error('expected a run');
  return request.options;
}

describe('--listen and GSUP_LISTEN', () => {
  it('`--listen VALUE` (repeated), `--`, a command: read without commander, as commander reads it', async () => {
    const env = { GSUP_LISTEN_PRELOAD: '0', GSUP_SUBREAPER: '0' };
    const readFlags = vi.spyOn(flags, 'readFlags');
    const listen = ['--listen', '8080', '--listen', 'admin=127.0.0.1:9000'];
    const fast = await parse([...listen, '-t', '8s', '--', 'node', 'app.js'], env);
    expect(readFlags).not.toHaveBeenCalled();
    // The same through commander (a short option's value run into it, `-t8s`, is not a plain form).
    const read = await parse([...listen, '-t8s', '--', 'node', 'app.js'], env);
    expect(readFlags).toHaveBeenCalledOnce();
    expect(fast).toEqual(read);
    expect(fast).toMatchObject({ command: 'node', args: ['app.js'], listenPreload: false, subreaper: false });
    // Anything but plain forms is commander's (command-line.ts): options run together, a value like an option, a
    // command that begins with `-`.
    for (const argv of [
      ['--listen', '8080', '-vq', '--', 'x'],
      ['--listen', '-1', '--', 'x'],
      ['--listen', '8080', '-1'],
    ])
      await parse(argv).catch(() => undefined);
    expect(readFlags).toHaveBeenCalledTimes(4);
    readFlags.mockRestore();
  });

  it('repeatable, in order (fds 3…); GSUP_LISTEN a comma list; the flag wins', async () => {
    expect((await parse(['--listen', '8080', '--listen', 'admin=127.0.0.1:9000', 'x'])).listen).toEqual([
      { name: '8080', host: undefined, family: undefined, port: 8080 },
      { name: 'admin', host: '127.0.0.1', family: 4, port: 9000 },
    ]);
    const env = { GSUP_LISTEN: 'web=[::]:8080, 9090' };
    expect((await parse(['x'], env)).listen.map((address) => address.name)).toEqual(['web', '9090']);
    expect((await parse(['--listen', '7070', 'x'], env)).listen.map((address) => address.name)).toEqual(['7070']);
    expect((await parse(['x'])).listen).toEqual([]);
  });

  it('a bad address, port or name, or a name twice: a usage error naming the value and where it came from', async () => {
    await expect(parse(['--listen', '0', 'x'])).rejects.toThrow(
      'invalid value "0" for --listen: port "0" is not 1-65535',
    );
    await expect(parse(['x'], { GSUP_LISTEN: 'host:80' })).rejects.toThrow(
      'invalid value "host:80" for GSUP_LISTEN: "host" is no literal address (no name is looked up)',
    );
    await expect(parse(['--listen', 'a=1', '--listen', 'a=2', 'x'])).rejects.toThrow(
      'the name "a" is given twice for --listen',
    );
    await expect(parse(['x'], { GSUP_LISTEN: '8080,127.0.0.1:8080' })).rejects.toThrow(
      'the name "8080" is given twice for GSUP_LISTEN',
    );
  });

  it('--no-listen-preload and GSUP_LISTEN_PRELOAD=0 leave NODE_OPTIONS alone; on by default', async () => {
    expect((await parse(['x'])).listenPreload).toBe(true);
    expect((await parse(['--no-listen-preload', 'x'])).listenPreload).toBe(false);
    expect((await parse(['x'], { GSUP_LISTEN_PRELOAD: '0' })).listenPreload).toBe(false);
    expect((await parse(['x'], { GSUP_LISTEN_PRELOAD: '1' })).listenPreload).toBe(true);
    await expect(parse(['x'], { GSUP_LISTEN_PRELOAD: 'maybe' })).rejects.toThrow(
      'invalid value "maybe" for GSUP_LISTEN_PRELOAD',
    );
  });
});

describe("gsup's settings are not the command's", () => {
  it('every GSUP_* variable of an option (as --help names them) is a setting', () => {
    const help = readFileSync(join(ROOT, 'src', 'options', 'flags.ts'), 'utf8');
    const named = new Set([...help.matchAll(/\b(GSUP_[A-Z0-9_]+)/g)].map((match) => match[1]));
    expect([...named].filter((name) => !(SETTINGS as readonly string[]).includes(name))).toEqual([]);
  });

  it('settings go, and so do sockets gsup was handed (stale: its Node closed their fds); the runs’ mark stays, and so does anything else', () => {
    const env = {
      GSUP_LISTEN: '8080',
      GSUP_KILL_TIMEOUT: '3s',
      GSUP_HEALTH_CMD: 'true',
      GSUP_RUN: 'abc.1',
      GSUP_LISTEN_ID: '9:1@[::]:8080',
      GSUP_REPORT_FD: '4',
      LISTEN_FDS: '1',
      LISTEN_FDNAMES: '8080',
      LISTEN_PID: '7',
      GSUP_FFI: '0',
      PATH: '/bin',
    };
    expect(withoutSettings(env)).toEqual({
      GSUP_RUN: 'abc.1',
      GSUP_FFI: '0',
      PATH: '/bin',
    });
    expect(env.GSUP_LISTEN).toBe('8080'); // gsup's own is untouched
  });
});
