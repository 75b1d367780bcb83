import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, podman, podmanSkipReason } from '../../scripts/container.js';
import { CAP_SYS_PTRACE, capEff } from '../helpers/caps.js';
import { fixture } from '../helpers/gsup.js';
import { Container } from '../helpers/podman.js';

// gsup as PID 1 of a real container, with the runtime's default capabilities (no CAP_SYS_PTRACE, as in
// Docker): the app drops to another user (as gosu does: setuid, then the app) and leaves a daemon whose run
// mark gsup cannot read. runtime.test.ts says why these tests may be skipped.

const skipReason = podmanSkipReason();
const containers: Container[] = [];
afterEach(() => {
  for (const box of containers.splice(0)) box.remove();
});

/** Copies of these fixtures in /out, where uid 65534 can read them (and write: mode 0777). */
const withFixtures = (names: string[]) => (out: string) => {
  chmodSync(out, 0o777);
  for (const name of names) {
    copyFileSync(fixture(name), join(out, name));
    chmodSync(join(out, name), 0o644);
  }
  writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
};

// gosu in node: drop to uid/gid 65534, run the rest, end with its status.
const AS_NOBODY =
  'process.setgroups([]); process.setgid(65534); process.setuid(65534);' +
  "require('child_process').spawn(process.execPath, process.argv.slice(1), { stdio: 'inherit' })" +
  '.on("exit", (code) => process.exit(code ?? 1))';

describe.skipIf(skipReason !== undefined)('gsup as PID 1 of a podman container, the app dropping privileges', () => {
  beforeAll(() => {
    buildImage();
  }, 240_000);

  it('a setsid daemon left by the command as uid 65534: gsup stays after the command exits 0, and podman stop gives the daemon exactly one SIGTERM', async () => {
    const daemonize = ['/out/daemonize.js', '--then', 'exit:0', '--', '--cleanup', '100'];
    const box = new Container(['node', '-e', AS_NOBODY, ...daemonize], {
      env: { GSUP_VERBOSE: '1' },
      prepare: withFixtures(['daemonize.js', 'printer.js']),
    });
    containers.push(box);
    await box.waitForLog(/^ready \(pid: \d+, daemon\)$/);
    await box.waitForLog(/is the tree's: reparented to gsup, its mark cannot be read \(EACCES/);
    await box.waitForLog(/command exited \(code 0\); waiting for 1 remaining process/);
    // The runtime's defaults, as Docker's: gsup (PID 1 there) lacks CAP_SYS_PTRACE.
    const hostPid = Number(podman(['inspect', '-f', '{{.State.Pid}}', box.name]).trim());
    expect(capEff(hostPid) & (1n << BigInt(CAP_SYS_PTRACE))).toBe(0n);
    expect(readFileSync(`/proc/${hostPid}/cmdline`, 'latin1')).toMatch(/gsup/);
    expect(box.count(/^signal: /)).toBe(0);
    box.stop(5);
    expect(box.count(/^signal: SIGTERM .*daemon\)$/)).toBe(1);
    expect(box.count(/^clean exit .*daemon\)$/)).toBe(1);
    expect(box.exitCode()).toBe(0);
  });
});
