import { describe, expect, it } from 'vitest';
import { linuxPlatform, parseStat } from '../../src/platform/linux.js';
import { parsePsLine } from '../../src/platform/posix.js';
import { isAlive } from '../../src/platform/index.js';

describe('/proc/PID/stat', () => {
  it('reads state, ppid, pgid, session and start time, whatever the command name holds', () => {
    const stat = '4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 ...';
    expect(parseStat(4242, stat)).toEqual({ pid: 4242, name: 'my (odd) name', state: 'S', ppid: 1, pgid: 4242, sid: 4242, startTime: 987654 });
  });

  it('reads this process, and knows a zombie is not alive', async () => {
    const self = await linuxPlatform.processInfo(process.pid);
    expect(self).toMatchObject({ pid: process.pid, ppid: process.ppid, state: expect.stringMatching(/[RS]/) });
    expect(isAlive(self)).toBe(true);
    expect(isAlive({ ...self!, state: 'Z' })).toBe(false);
    expect(await linuxPlatform.processInfo(2 ** 30)).toBeUndefined();
    expect(linuxPlatform.commandLine(process.pid)).toContain('node');
  });

  it('lists processes quickly: this one among them', async () => {
    const all = await linuxPlatform.listProcesses();
    expect(all.some((info) => info.pid === process.pid)).toBe(true);
  });
});

describe('ps output', () => {
  it('parses a line of `ps -o pid=,ppid=,pgid=,stat=,lstart=`', () => {
    expect(parsePsLine('  123   1   123 Ss   Sun Nov 22 12:00:01 2026')).toMatchObject({ pid: 123, ppid: 1, pgid: 123, state: 'S' });
    expect(parsePsLine('  124 123   123 Z+   Sun Nov 22 12:00:02 2026')?.state).toBe('Z');
    expect(parsePsLine('garbage')).toBeUndefined();
  });
});
