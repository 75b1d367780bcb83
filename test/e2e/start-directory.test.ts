import { readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GSUP, PRINTER, Run, gsup, tempDir } from '../helpers/gsup.js';
import { waitFor } from '../helpers/proc.js';

// gsup leaves its start directory for / (it holds no mount busy); the command starts in it, every run.

const MODES = ['group', 'child', 'tree'] as const;

describe.each(MODES)('working directory, --target %s', (mode) => {
  it('the command runs in the start directory; gsup itself moves to /', async () => {
    const dir = tempDir();
    try {
      const run = gsup(['--target', mode, '--', 'node', PRINTER], { cwd: dir.path });
      const pid = await run.ready();
      expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(realpathSync(dir.path));
      await waitFor(() => readlinkSync(`/proc/${run.pid}/cwd`) === '/', 'gsup to leave its start directory');
      run.signal('SIGTERM');
      expect((await run.finished()).code).toBe(0);
    } finally {
      dir.remove();
    }
  });

  it('a restart runs a relative command in the start directory again', async () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir.path, 'run.sh'), '#!/bin/sh\necho "cwd: $(pwd)"\nexit 1\n', { mode: 0o755 });
      const run = gsup(['--target', mode, '--restart', 'always', '--restart-delay', '50ms', '--', './run.sh'], {
        cwd: dir.path,
      });
      await waitFor(() => run.count(/^cwd: /) >= 3, 'three runs');
      run.signal('SIGTERM');
      await run.finished();
      const runs = run.stdout.filter((line) => line.startsWith('cwd: '));
      expect(new Set(runs)).toEqual(new Set([`cwd: ${realpathSync(dir.path)}`]));
    } finally {
      dir.remove();
    }
  });
});

describe('the command’s start directory, gsup’s /', () => {
  it('the command’s parent is in / from its first instruction, and the command in the start directory: 20 runs', async () => {
    const dir = tempDir();
    try {
      for (let i = 0; i < 20; i++) {
        const run = gsup(['--', 'sh', '-c', 'readlink /proc/$PPID/cwd; pwd'], { cwd: dir.path });
        expect(await run.finished()).toEqual({ code: 0, signal: null });
        expect(run.stdout.slice(0, 2)).toEqual(['/', dir.path]);
      }
    } finally {
      dir.remove();
    }
  });
});

describe('a start directory removed before gsup starts (getcwd fails)', () => {
  it('gsup moves to / all the same, and the command starts in /, said once', async () => {
    const dir = tempDir();
    // The shell enters the directory, removes it, then becomes gsup: gsup starts where getcwd fails.
    const line = `cd ${dir.path} && rmdir ${dir.path} && exec ${process.execPath} ${GSUP} -- sh -c 'readlink /proc/$PPID/cwd; pwd'`;
    const run = new Run('sh', ['-c', line]);
    expect(await run.finished()).toEqual({ code: 0, signal: null });
    expect(run.stdout, run.transcript()).toEqual(['/', '/']);
    expect(
      run.stderr.filter((text) =>
        text.includes('the start directory is gone (getcwd: ENOENT): the command starts in /'),
      ),
    ).toHaveLength(1);
  });
});
