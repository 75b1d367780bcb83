import { describe, expect, it } from 'vitest';
import { fixture, gsup, leftovers } from '../helpers/gsup.js';
import { readProc, waitFor } from '../helpers/proc.js';

// SIGCONT goes only to a stopped process that has had the stop signal, after it (systemd's way): not to one that
// gsup sends nothing, such as a worker in a group of its own whose parent lives (the parent stops it its own way).

describe('a stopped worker that its living parent stops', () => {
  it('gets no SIGCONT from gsup: only its parent’s, after the parent had SIGTERM', async () => {
    const run = gsup(['-v', '-t', '10s', '--', 'node', fixture('worker-parent.js')]);
    const worker = await run.ready('worker');
    await run.ready('parent');
    process.kill(worker, 'SIGSTOP');
    await waitFor(() => readProc(worker)?.state === 'T', 'the worker stopped');
    run.signal('SIGTERM');
    const exit = await run.finished();
    // Before: gsup's SIGCONT at its stop round (the worker ran on, told nothing), then the parent's.
    expect(run.count(/^signal: SIGCONT \(pid: \d+, worker\)$/)).toBe(1);
    const parentTold = run.stdout.findIndex((line) => /^signal: SIGTERM \(pid: \d+, parent\)$/.test(line));
    const continued = run.stdout.findIndex((line) => /^signal: SIGCONT \(pid: \d+, worker\)$/.test(line));
    expect(parentTold).toBeGreaterThanOrEqual(0);
    expect(continued).toBeGreaterThan(parentTold);
    expect(run.count(/^signal: SIGINT \(pid: \d+, worker\)$/)).toBe(1);
    expect(run.count(/^signal: SIGTERM \(pid: \d+, worker\)$/)).toBe(0);
    const log = run.stderr.join('\n');
    expect(log).not.toContain('SIGCONT →');
    expect(log).toMatch(/stopped in .*: \d+ exited by themselves, 0 killed/);
    expect(exit.code).toBe(0);
    expect(leftovers(run)).toEqual([]);
  });
});
