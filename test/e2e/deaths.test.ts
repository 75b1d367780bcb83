import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownMemoryCgroup, readMemoryCgroup } from '../../src/platform/linux/proc/cgroup.js';
import { GSUP, PRINTER, Run, fixture, gsup, tempDir } from '../helpers/gsup.js';
import { afterLeakCheck } from '../helpers/leaks.js';
import { freePort } from '../helpers/net.js';

// Deaths explained (an OOM kill named, an outside SIGKILL said so, gsup's own
// SIGKILL neither) and the termination log, with real processes and a real
// memory cgroup with a small limit.

const HOG = fixture('hog.js');
const LIMIT = 256 * 2 ** 20;

/** A fresh memory cgroup with a 256 MiB limit and no swap (v1 or v2), removed after the test; or why there is none. */
function memoryCgroup(): string | { reason: string } {
  const name = `gsup-test-${process.pid}-${Date.now()}`;
  const v1 = '/sys/fs/cgroup/memory';
  const v2 = '/sys/fs/cgroup';
  try {
    let dir: string;
    if (existsSync(join(v1, 'memory.limit_in_bytes'))) {
      dir = join(v1, name);
      mkdirSync(dir);
      afterLeakCheck(() => removeCgroup(dir));
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(LIMIT));
      const swap = join(dir, 'memory.memsw.limit_in_bytes');
      if (existsSync(swap)) writeFileSync(swap, String(LIMIT));
    } else if (readFileSync(join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) {
      writeFileSync(join(v2, 'cgroup.subtree_control'), '+memory');
      dir = join(v2, name);
      mkdirSync(dir);
      afterLeakCheck(() => removeCgroup(dir));
      writeFileSync(join(dir, 'memory.max'), String(LIMIT));
      if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
    } else {
      return { reason: 'no memory controller in cgroup v1 or v2' };
    }
    return dir;
  } catch (error) {
    return { reason: `no writable memory cgroup (${(error as Error).message})` };
  }
}

/** rmdir once its processes are gone (they were killed by the leak check). */
function removeCgroup(dir: string): void {
  if (!existsSync(dir)) return;
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      rmdirSync(dir);
      return;
    } catch {
      execFileSync('sleep', ['0.05']);
    }
  }
}

/** gsup moved into `cgroup` first (its tree with it), the way a container's PID 1 is in the container's cgroup. */
function gsupIn(cgroup: string, args: string[]): Run {
  const enter = `echo $$ > ${cgroup}/cgroup.procs && exec "$0" "$@"`;
  return new Run('sh', ['-c', enter, process.execPath, GSUP, ...args]);
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

const OOM_LINE = /was killed by the kernel's OOM killer/;
const cgroup = memoryCgroup();
if (typeof cgroup !== 'string') console.log(`OOM kill tests skipped: ${cgroup.reason}`);
const skipOom = typeof cgroup !== 'string';
const ownCount = await ownMemoryCgroup().then((found) => found && readMemoryCgroup(found));
if (typeof cgroup === 'string') removeCgroup(cgroup); // each test makes its own

describe('deaths explained', () => {
  const commandOom = 'the command OOM-killed in a 256 MiB cgroup: one warning (limit, peak), in the termination log';
  it.skipIf(skipOom)(
    commandOom,
    async () => {
      const dir = memoryCgroup() as string;
      const log = join(tempDir().path, 'termination-log');
      afterLeakCheck(() => rmSync(log, { force: true }));
      const run = gsupIn(dir, ['--termination-log', log, '--', process.execPath, HOG]);
      const pid = await run.ready('hog');
      expect(await run.finished(30_000)).toEqual({ code: 137, signal: null });
      const lines = run.stderr.filter((line) => OOM_LINE.test(line));
      expect(lines).toHaveLength(1);
      const said = "was killed by the kernel's OOM killer \\(memory cgroup limit 256 MiB, peak \\d";
      expect(lines[0]).toMatch(new RegExp(`^\\[gsup\\] the command \\(pid ${pid}: .*hog\\.js\\) ${said}`));
      const message = readFileSync(log, 'utf8');
      expect(message.split('\n')[0]).toBe(lines[0].replace('[gsup] ', ''));
      expect(message).toMatch(/\ngsup exited 137: the command died of signal SIGKILL\n$/);
      expect(Buffer.byteLength(message)).toBeLessThanOrEqual(4096);
    },
    40_000,
  );

  const orphanOom = 'an orphan OOM-killed: reaped, named by pid, counted in gsup_oom_kills_total (promtool clean)';
  it.skipIf(skipOom)(
    orphanOom,
    async () => {
      const dir = memoryCgroup() as string;
      const port = await freePort();
      const log = join(tempDir().path, 'termination-log');
      afterLeakCheck(() => rmSync(log, { force: true }));
      // The hog is orphaned at once (its subshell exits): it comes to gsup, the subreaper, which reaps it.
      const script = `("$0" "${HOG}" &); exec "$0" "${PRINTER}"`;
      const options = ['--status-port', String(port), '--termination-log', log];
      const run = gsupIn(dir, [...options, '--', 'sh', '-c', script, process.execPath]);
      const hog = await run.ready('hog');
      await run.ready();
      const oom = new RegExp(`^\\[gsup\\] pid ${hog} \\(.*\\) was killed by the kernel's OOM killer`);
      await run.waitForLine(oom, { stream: 'stderr', timeoutMs: 30_000 });
      const metrics = await get(port, '/metrics');
      expect(metrics).toMatch(/^# TYPE gsup_oom_kills_total counter$/m);
      expect(metrics).toMatch(/^gsup_oom_kills_total 1$/m);
      try {
        execFileSync('promtool', ['--version'], { stdio: 'ignore' });
        execFileSync('promtool', ['check', 'metrics'], { input: metrics, stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        console.log('promtool check skipped: promtool is not installed');
      }
      run.signal('SIGTERM');
      expect(await run.finished()).toEqual({ code: 0, signal: null });
      expect(run.stderr.filter((line) => OOM_LINE.test(line))).toHaveLength(1);
      const message = readFileSync(log, 'utf8');
      expect(message).toMatch(new RegExp(`^pid ${hog} \\(.*\\) was killed by the kernel's OOM killer`));
      expect(message).toMatch(/\nSIGTERM received: stopping the tree/);
      expect(message).toMatch(/\nstopped in .*: 1 exited by themselves, 0 killed\n/);
      expect(message).toMatch(/\ngsup exited 0: the command exited with code 0\n$/);
    },
    40_000,
  );

  it('a SIGKILL from outside is said so, not blamed on the OOM killer', async () => {
    const port = await freePort();
    const log = join(tempDir().path, 'termination-log');
    afterLeakCheck(() => rmSync(log, { force: true }));
    const run = gsup(['--status-port', String(port), '--termination-log', log, '--', process.execPath, PRINTER]);
    const pid = await run.ready();
    process.kill(pid, 'SIGKILL');
    expect(await run.finished()).toEqual({ code: 137, signal: null });
    const said = ownCount ? "from outside \\(the cgroup's OOM count did not rise\\)" : 'gsup did not send';
    const line = new RegExp(`^\\[gsup\\] the command \\(pid ${pid}: .*printer\\.js\\) was killed by SIGKILL ${said}`);
    expect(run.stderr.filter((text) => line.test(text))).toHaveLength(1);
    expect(run.stderr.join('\n')).not.toMatch(OOM_LINE);
    const message = readFileSync(log, 'utf8');
    expect(message).toMatch(new RegExp(`^the command \\(pid ${pid}: .*\\) was killed by SIGKILL ${said}`));
    expect(message).toMatch(/\ngsup exited 137: the command died of signal SIGKILL\n$/);
  });

  it("gsup's own SIGKILL at the kill timeout is neither; the termination log names the stop", async () => {
    const log = join(tempDir().path, 'termination-log');
    afterLeakCheck(() => rmSync(log, { force: true }));
    const run = gsup(['-t', '300ms', '--termination-log', log, '--', process.execPath, PRINTER, '--ignore-stop']);
    const pid = await run.ready();
    run.signal('SIGTERM');
    await run.waitForLine(/^signal: SIGTERM/);
    expect(await run.finished()).toEqual({ code: 137, signal: null });
    expect(run.stderr.join('\n')).toMatch(/kill timeout \(300ms\) expired: sending SIGKILL/);
    expect(run.stderr.join('\n')).not.toMatch(/killed by SIGKILL|OOM killer/);
    const message = readFileSync(log, 'utf8').split('\n');
    expect(message[0]).toMatch(/^SIGTERM received: stopping the tree with SIGTERM/);
    expect(message).toContain('kill timeout (300ms) expired: sending SIGKILL');
    const summary = message.find((text) => text.startsWith('stopped in'));
    expect(summary).toMatch(new RegExp(`0 exited by themselves, 1 killed: ${pid} \\(.*printer\\.js`));
    expect(message.at(-2)).toBe('gsup exited 137: the command died of signal SIGKILL');
  });
});

describe('--termination-log', () => {
  it("GSUP_TERMINATION_LOG: the command's status, written once at the end, replacing what was there", async () => {
    const dir = tempDir();
    afterLeakCheck(dir.remove);
    const log = join(dir.path, 'termination-log');
    writeFileSync(log, 'an older message that is much longer than the new one\n');
    const run = gsup(['--', 'sh', '-c', 'exit 3'], { env: { GSUP_TERMINATION_LOG: log } });
    expect(await run.finished()).toEqual({ code: 3, signal: null });
    expect(readFileSync(log, 'utf8')).toBe('gsup exited 3: the command exited with code 3\n');
  });

  it('a path that cannot be written: one line and 125 at start, nothing run', async () => {
    const dir = tempDir();
    afterLeakCheck(dir.remove);
    const marker = join(dir.path, 'ran');
    const run = gsup(['--termination-log', join(dir.path, 'missing', 'log'), '--', 'sh', '-c', `touch ${marker}`]);
    expect(await run.finished()).toEqual({ code: 125, signal: null });
    const why = `${join(dir.path, 'missing', 'log')} (--termination-log): its directory: ENOENT`;
    expect(run.stderr.filter((line) => line !== '')).toEqual([`gsup: cannot write the termination log ${why}`]);
    expect(existsSync(marker)).toBe(false);
  });

  it("a write that fails at the end is one warning; the exit status stays the command's", async () => {
    const dir = tempDir();
    const sub = join(dir.path, 'sub');
    mkdirSync(sub);
    afterLeakCheck(dir.remove);
    // The directory goes away while the command runs: the start's check passed, the end's write fails.
    const run = gsup(['--termination-log', join(sub, 'log'), '--', 'sh', '-c', `rmdir ${sub}; exit 4`]);
    expect(await run.finished()).toEqual({ code: 4, signal: null });
    const warning = `[gsup] cannot write the termination log ${join(sub, 'log')}: ENOENT`;
    expect(run.stderr.filter((line) => /termination log/.test(line))).toEqual([warning]);
  });

  it.skipIf(existsSync('/dev/termination-log'))('none given and no /dev/termination-log: nothing written', async () => {
    const run = gsup(['--', 'sh', '-c', 'exit 0']);
    expect(await run.finished()).toEqual({ code: 0, signal: null });
    expect(existsSync('/dev/termination-log')).toBe(false);
  });
});
