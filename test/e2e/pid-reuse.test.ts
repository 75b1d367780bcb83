import { describe, expect, it } from 'vitest';
import { GSUP, Run, fixture, unshareWorks } from '../helpers/gsup.js';

// gsup signals only its own processes: a pid that outlived the process gsup knew by it names a stranger.

const isRoot = process.getuid?.() === 0;

describe.skipIf(!unshareWorks || !isRoot)('the command’s pid outlives the command (PID namespace, ns_last_pid)', () => {
  it('a stranger that reuses the exited command’s pid and session id is neither signalled nor waited for', async () => {
    const run = new Run(
      'unshare',
      ['--pid', '--fork', '--mount-proc', process.execPath, fixture('reuse-driver.js'), GSUP],
      { namespaced: true },
    );
    await run.finished(20_000);
    const seen = run.stdout.join('\n');
    const [, strangerPid, commandPid] = /^stranger (\d+) command (\d+)$/m.exec(seen) ?? [];
    expect(strangerPid, seen).toBeDefined();
    expect(strangerPid).toBe(commandPid); // the reuse happened
    // gsup stopped what was its own (the daemon) and exited at once: 143 is sh's... no, the daemon's SIGTERM; the command exited 0.
    expect(seen).toMatch(/^gsup exit 0 null$/m);
    expect(seen).not.toContain(`pid ${strangerPid} joined the tree`);
    expect(seen).toMatch(/stopped in \d+ms: 1 exited by themselves, 0 killed/);
    expect(seen).toContain('stranger signals: []');
  });
});
