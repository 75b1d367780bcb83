import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { environValue, OVERWRITTEN } from '../../../../../src/platform/linux/proc/environ.js';
import { waitFor } from '../../../../helpers/proc.js';

// A daemon that sets its title by writing over its argv (perl's $0, nginx, php-fpm, redis, setproctitle) writes
// over the environment that follows it too: what /proc/PID/environ then shows is no environment, and its mark
// cannot be read there — unreadable, not absent. An environment emptied (`env -i`) is one, without the mark.

describe('/proc/PID/environ of a process that set its title', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  /** A perl process that runs `code`, then says `ready` and sleeps; with `env`, its whole environment. */
  async function perl(code: string, env: NodeJS.ProcessEnv = { ...process.env, GSUP_RUN: 'tok.1' }) {
    const child = spawn('perl', ['-e', `${code}; $| = 1; print "ready\\n"; sleep 30`], {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (chunk) => (out += String(chunk)));
    await waitFor(() => out.includes('ready'), 'perl ready');
    return child.pid!;
  }

  it.each([
    { name: 'no title set: the mark found', code: '1', read: { found: 'value', value: 'tok.1' } },
    {
      name: 'a title within argv: perl pads the rest, environment included (a NUL, then spaces)',
      code: '$0 = "mydaemon: master"',
      read: OVERWRITTEN,
    },
    {
      name: 'a title longer than argv, run on into the environment (with a NAME=value look-alike in it)',
      code: '$0 = ("x" x 40) . " --config=/etc/app.conf " . ("y" x 20)',
      read: OVERWRITTEN,
    },
  ])('$name', async ({ code, read }) => {
    expect(await environValue(await perl(code), 'GSUP_RUN')).toEqual(read);
  });

  it('an environment without the mark, and one emptied (env -i): absent, as before', async () => {
    const { GSUP_RUN: _, ...without } = { ...process.env, GSUP_RUN: '' };
    expect(await environValue(await perl('1', without), 'GSUP_RUN')).toEqual({ found: 'absent' });
    expect(await environValue(await perl('1', {}), 'GSUP_RUN')).toEqual({ found: 'absent' });
  });
});
