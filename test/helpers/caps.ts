import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { GSUP, Run, unshareWorks, type RunOptions } from './gsup.js';

// Docker's default capabilities (moby's oci/caps/defaults.go): no CAP_SYS_PTRACE, so root there
// cannot read the environment of another user's process. podman's defaults are a subset of these.
export const DOCKER_CAPS = [
  'chown',
  'dac_override',
  'fowner',
  'fsetid',
  'kill',
  'setgid',
  'setuid',
  'setpcap',
  'net_bind_service',
  'net_raw',
  'sys_chroot',
  'mknod',
  'audit_write',
  'setfcap',
];
export const CAP_SYS_PTRACE = 19;

/** The user an app drops to (`nobody`), and how (util-linux's setpriv, as gosu or su-exec would). */
export const DROP = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];

/** Whether a PID namespace can be made and capabilities and users dropped here (root, util-linux's setpriv). */
export const dropWorks: boolean =
  unshareWorks &&
  process.getuid?.() === 0 &&
  (() => {
    try {
      execFileSync('setpriv', ['--bounding-set', `-all,+${DOCKER_CAPS.join(',+')}`, '--inh-caps=-all', 'true'], {
        stdio: 'ignore',
      });
      return true;
    } catch {
      return false;
    }
  })();

/** gsup as PID 1 of a new PID namespace with Docker's capabilities only (its bounding set: no CAP_SYS_PTRACE). */
export function gsupAsPid1WithDockerCaps(args: string[], options: RunOptions = {}): Run {
  const caps = ['setpriv', '--bounding-set', `-all,+${DOCKER_CAPS.join(',+')}`, '--inh-caps=-all'];
  return new Run('unshare', ['--pid', '--fork', '--mount-proc', ...caps, process.execPath, GSUP, ...args], {
    ...options,
    namespaced: true,
  });
}

/** A process's effective capabilities (/proc/PID/status, CapEff). */
export function capEff(pid: number): bigint {
  const hex = /^CapEff:\s+([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
  if (hex === undefined) throw new Error(`no CapEff for pid ${pid}`);
  return BigInt(`0x${hex}`);
}
