import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Deaths, explainKill, formatBytes, killLine } from '../../../src/engine/children/deaths.js';
import { StatusBoard } from '../../../src/engine/shell/status-board.js';
import { Logger } from '../../../src/output/log.js';
import {
  memoryCgroupOf,
  parseBytes,
  parseCgroupMounts,
  parseOomKills,
  parseProcCgroup,
  readMemoryCgroup,
  type MemoryCgroup,
  type OomReading,
} from '../../../src/platform/linux/proc/cgroup.js';
import { terminationMessage, TerminationNotes, truncateUtf8 } from '../../../src/cli/termination.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

// Deaths explained and the termination message: the parsing of what the kernel
// says (v1 and v2), the verdicts, and the message's size.

const V1_CGROUP = ['12:pids:/docker/abc', '4:memory:/docker/abc', '3:cpu,cpuacct:/docker/abc', '0::/', ''].join('\n');
const V2_CGROUP = '0::/kubepods.slice/pod1/cri-containerd-x.scope\n';
const V1_MOUNTS = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
  '35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory',
  '36 31 0:33 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw',
].join('\n');
const V2_MOUNTS = '29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n';

describe('a memory cgroup read', () => {
  it('the count, limit and peak; with countOnly the count alone (v2 and v1 files)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gsup-cgroup-'));
    try {
      writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 2\noom 1\noom_kill 3\n');
      writeFileSync(join(dir, 'memory.max'), '67108864\n');
      writeFileSync(join(dir, 'memory.peak'), '1024\n');
      writeFileSync(join(dir, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 5\n');
      writeFileSync(join(dir, 'memory.limit_in_bytes'), '1048576\n');
      writeFileSync(join(dir, 'memory.max_usage_in_bytes'), '2048\n');
      const v2 = { dir, version: 2 } as const;
      expect(await readMemoryCgroup(v2)).toEqual({ oomKills: 3, limit: 2 ** 26, peak: 1024 });
      expect(await readMemoryCgroup(v2, true)).toEqual({ oomKills: 3, limit: undefined, peak: undefined });
      const v1 = { dir, version: 1 } as const;
      expect(await readMemoryCgroup(v1)).toEqual({ oomKills: 5, limit: 2 ** 20, peak: 2048 });
      expect(await readMemoryCgroup(v1, true)).toEqual({ oomKills: 5, limit: undefined, peak: undefined });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('/proc/PID/cgroup and mountinfo', () => {
  it('v1: the memory controller among combined ones; v2: the 0:: line; a path with ":" kept whole', () => {
    expect(parseProcCgroup(V1_CGROUP)).toEqual({ v1Memory: '/docker/abc', v2: '/' });
    expect(parseProcCgroup(V2_CGROUP)).toEqual({ v2: '/kubepods.slice/pod1/cri-containerd-x.scope' });
    expect(parseProcCgroup('5:cpu,memory:/a:b\n')).toEqual({ v1Memory: '/a:b' });
    expect(parseProcCgroup('garbage\n\n')).toEqual({});
  });

  it('mounts: v1 memory by its super options, v2 by its type; escaped spaces read', () => {
    expect(parseCgroupMounts(V1_MOUNTS)).toEqual({
      v1Memory: { root: '/docker/abc', point: '/sys/fs/cgroup/memory' },
      v2: { root: '/', point: '/sys/fs/cgroup/unified' },
    });
    const spaced = '1 2 0:1 / /mnt/my\\040cg rw - cgroup2 none rw\n';
    expect(parseCgroupMounts(spaced).v2).toEqual({ root: '/', point: '/mnt/my cg' });
  });

  it('the directory: v1 memory first (hybrid), relative to the mount root (a container sees its own as /)', () => {
    expect(memoryCgroupOf(V1_CGROUP, V1_MOUNTS)).toEqual({ dir: '/sys/fs/cgroup/memory', version: 1 });
    const hostMount = V1_MOUNTS.replace('0:32 /docker/abc', '0:32 /');
    expect(memoryCgroupOf(V1_CGROUP, hostMount)).toEqual({ dir: '/sys/fs/cgroup/memory/docker/abc', version: 1 });
    const pod = '/sys/fs/cgroup/kubepods.slice/pod1/cri-containerd-x.scope';
    expect(memoryCgroupOf(V2_CGROUP, V2_MOUNTS)).toEqual({ dir: pod, version: 2 });
    // Outside the mount's root (another namespace's cgroup): not readable here.
    expect(memoryCgroupOf('4:memory:/other\n', V1_MOUNTS.split('\n')[2])).toBeUndefined();
    expect(memoryCgroupOf('4:memory:/docker/abcdef\n', V1_MOUNTS.split('\n')[2])).toBeUndefined();
    expect(memoryCgroupOf('', V2_MOUNTS)).toBeUndefined();
  });
});

describe('memory.events (v2) and memory.oom_control (v1)', () => {
  it('oom_kill N of either; not oom_group_kill; none on kernels that do not count', () => {
    const v2 = 'low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n';
    expect(parseOomKills(v2)).toBe(2);
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 7\n')).toBe(7);
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\n')).toBeUndefined();
  });

  it('limits and peaks: bytes; "max" and v1\'s largest number mean none', () => {
    expect(parseBytes('268435456\n')).toBe(268435456);
    expect(parseBytes('max\n')).toBeUndefined();
    expect(parseBytes('9223372036854771712\n')).toBeUndefined();
    expect(parseBytes(undefined)).toBeUndefined();
    expect(formatBytes(64 * 2 ** 20)).toBe('64 MiB');
    expect(formatBytes(1.5 * 2 ** 30)).toBe('1.5 GiB');
  });
});

describe('a SIGKILL gsup did not send', () => {
  it('a rise is one OOM kill per death; none is from outside; no count cannot tell', () => {
    expect(explainKill(0, 1)).toEqual({ verdict: 'oom', counted: 1 });
    // A group OOM kill: three deaths, three kills counted.
    expect(explainKill(1, 3)).toEqual({ verdict: 'oom', counted: 2 });
    expect(explainKill(2, 3)).toEqual({ verdict: 'oom', counted: 3 });
    expect(explainKill(3, 3)).toEqual({ verdict: 'outside', counted: 3 });
    expect(explainKill(undefined, 3)).toEqual({ verdict: 'unknown', counted: 3 });
    expect(explainKill(3, undefined)).toEqual({ verdict: 'unknown', counted: 3 });
  });

  it('the lines', () => {
    const reading = { oomKills: 1, limit: 64 * 2 ** 20, peak: 64 * 2 ** 20 };
    const oom = "pid 5 (node) was killed by the kernel's OOM killer (memory cgroup limit 64 MiB, peak 64 MiB)";
    expect(killLine('pid 5 (node)', 'oom', reading)).toBe(oom);
    const unlimited = { oomKills: 1, limit: undefined, peak: undefined };
    expect(killLine('pid 5 (node)', 'oom', unlimited)).toMatch(/\(memory cgroup no limit set\)$/);
    expect(killLine('pid 5 (node)', 'outside', reading)).toMatch(/SIGKILL from outside/);
  });

  /** Deaths over a fake cgroup whose OOM count the test sets. */
  function deaths(count: () => number) {
    const platform = new FakePlatform();
    const cgroup: MemoryCgroup = { dir: '/fake', version: 2 };
    const reading = (): OomReading => ({ oomKills: count(), limit: 2 ** 26, peak: undefined });
    Object.assign(platform, { ownMemoryCgroup: async () => cgroup, readMemoryCgroup: async () => reading() });
    const lines: string[] = [];
    const status = new StatusBoard();
    const logger = new Logger({ verbosity: 1, write: (line) => lines.push(line) });
    return { lines, status, deaths: new Deaths(platform, logger, status) };
  }

  it('the end waits for the checks, not for the count at start (still on its way: gsup exits at once)', async () => {
    const platform = new FakePlatform();
    const never = new Promise<never>(() => {});
    Object.assign(platform, { ownMemoryCgroup: () => never, readMemoryCgroup: () => never });
    const watch = new Deaths(platform, new Logger({ write: () => {} }), undefined);
    watch.newRun(new Set()); // the first spawn: the count at start is read
    let settled = false;
    void watch.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(true);
    watch.sigkilled(10, 'node app.js', true);
    settled = false;
    void watch.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false); // a check waits (a second at most)
  });

  it('the count at start is read alone; a check reads the limit and peak too (its line says them)', async () => {
    const platform = new FakePlatform();
    const asked: boolean[] = [];
    const cgroup: MemoryCgroup = { dir: '/fake', version: 2 };
    Object.assign(platform, {
      ownMemoryCgroup: async () => cgroup,
      readMemoryCgroup: async (_: MemoryCgroup, countOnly?: boolean) => {
        asked.push(countOnly === true);
        return { oomKills: asked.length, limit: countOnly ? undefined : 2 ** 26, peak: undefined };
      },
    });
    const lines: string[] = [];
    const watch = new Deaths(platform, new Logger({ write: (line) => lines.push(line) }), undefined);
    watch.newRun(new Set());
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(asked).toEqual([true]);
    watch.sigkilled(10, 'node app.js', true);
    await watch.settled();
    expect(asked).toEqual([true, false]);
    expect(lines).toEqual([
      "[gsup] the command (pid 10: node app.js) was killed by the kernel's OOM killer (memory cgroup limit 64 MiB)\n",
    ]);
  });

  it("an OOM kill: one warning, counted; gsup's own SIGKILLs (and a forwarded one) say nothing", async () => {
    let count = 4;
    const { lines, status, deaths: watch } = deaths(() => count);
    watch.newRun(new Set()); // the first spawn: the count at start (4) is read
    await new Promise((resolve) => setTimeout(resolve, 0));
    count = 5;
    watch.sigkilled(10, 'node app.js', true);
    await watch.settled();
    const oom = "was killed by the kernel's OOM killer (memory cgroup limit 64 MiB)\n";
    expect(lines).toEqual([`[gsup] the command (pid 10: node app.js) ${oom}`]);
    expect(status.oomKills).toBe(1);
    watch.gsupKills();
    count = 6;
    watch.sigkilled(11, 'node', false);
    await watch.settled();
    expect(lines).toHaveLength(1);
    watch.newRun(new Set(['SIGKILL']));
    watch.sigkilled(12, 'node', false);
    watch.newRun(new Set());
    // The count rose while gsup killed: not blamed on a later death.
    watch.sigkilled(13, 'node', false);
    await watch.settled();
    const outside = "was killed by SIGKILL from outside (the cgroup's OOM count did not rise)\n";
    expect(lines.slice(1)).toEqual([`[gsup] pid 13 (node) ${outside}`]);
    count = 7;
    watch.sigkilled(14, '', false);
    await watch.settled();
    expect(lines.slice(2)).toEqual([`[gsup] pid 14 (?) ${oom}`]);
    expect(status.metrics()).toMatch(/^gsup_oom_kills_total 2$/m);
  });
});

describe('the termination message', () => {
  const result = { exitCode: 137, code: null, signal: 'SIGKILL' as const, killed: false };

  it('the lines of the last run that say why, then the status; a new run starts again', () => {
    const lines: string[] = [];
    const logger = new Logger({ verbosity: -1, write: (line) => lines.push(line) });
    const notes = new TerminationNotes(logger);
    logger.warn('unhealthy', 'first run: unhealthy');
    logger.debug('spawn', 'started node');
    logger.info('forward', 'SIGHUP → group 5');
    logger.notice('stop', 'SIGTERM received: stopping the tree with SIGTERM');
    logger.warn('oom-kill', 'pid 6 (a\u001b[2Jb) was killed');
    logger.notice('stopped', 'stopped in 1.00s: 1 exited by themselves, 0 killed');
    expect(terminationMessage(notes.notes, result)).toBe(
      [
        'SIGTERM received: stopping the tree with SIGTERM',
        'pid 6 (a\\x1b[2Jb) was killed',
        'stopped in 1.00s: 1 exited by themselves, 0 killed',
        'gsup exited 137: the command died of signal SIGKILL',
      ].join('\n'),
    );
    const missing = { exitCode: 127, code: null, signal: null, killed: false, error: 'nope: command not found' };
    expect(terminationMessage([], missing)).toBe('gsup exited 127: nope: command not found');
  });

  it('a reload: the lines of the run that is current at the end, never those of the run beside it', () => {
    const logger = new Logger({ verbosity: -1, write: () => {} });
    const notes = new TerminationNotes(logger);
    logger.warn('health-failed', 'run 1: a check failed');
    logger.notice('reload', 'SIGHUP received: reloading: run 2 starts beside run 1');
    logger.warn('reload-failed', 'run 2 exited (code 3) before it was ready: the reload failed, run 1 keeps serving');
    logger.notice('reload-retired', 'run 2 (the failed reload) stopped in 5ms (its command exited with code 3)');
    expect(notes.notes).toEqual(['run 1: a check failed']); // run 1 is still the current run
    logger.notice('reload-ready', 'run 3 is ready: retiring run 1 with SIGTERM');
    logger.warn('reload-kill-timeout', "run 1's kill timeout (8.00s) expired: sending SIGKILL");
    logger.notice('stop', 'SIGTERM received: stopping the tree with SIGTERM');
    expect(notes.notes).toEqual(['SIGTERM received: stopping the tree with SIGTERM']);
  });

  it('at most 4,095 bytes (4,096 with its newline), cut between characters: the first line and the latest kept', () => {
    expect(truncateUtf8('ab☕', 4)).toBe('a…');
    expect(truncateUtf8('ab☕', 5)).toBe('ab☕');
    expect(Buffer.byteLength(truncateUtf8('☕'.repeat(2000), 100))).toBeLessThanOrEqual(100);
    const notes = ['the cause', ...Array.from({ length: 40 }, (_, i) => `${i} ${'é'.repeat(200)}`)];
    const message = terminationMessage(notes, result);
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(4095);
    const lines = message.split('\n');
    expect(lines.slice(0, 2)).toEqual(['the cause', '…']);
    expect(lines.at(-2)).toMatch(/^39 é/);
    expect(lines.at(-1)).toBe('gsup exited 137: the command died of signal SIGKILL');
    expect(message).not.toContain('\uFFFD');
  });
});
