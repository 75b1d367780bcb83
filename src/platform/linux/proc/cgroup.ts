import { readFile } from 'node:fs';
import { join } from 'node:path';

// The memory cgroup's OOM kill count, limit and peak (Linux), for a SIGKILL
// gsup did not send: the kernel's OOM killer, or someone outside. cgroup v1
// (`memory.oom_control`) and v2 (`memory.events`) both exist in the wild.

/** A memory cgroup's directory, and which hierarchy it is of. */
export interface MemoryCgroup {
  readonly dir: string;
  readonly version: 1 | 2;
}

/** What the kernel says of it now: OOM kills so far, the limit and the peak (bytes) where it gives them. */
export interface OomReading {
  readonly oomKills: number;
  readonly limit: number | undefined;
  readonly peak: number | undefined;
}

/** The cgroup paths of /proc/PID/cgroup: v1's memory controller (`4:memory:/x`) and v2's unified one (`0::/x`). */
export function parseProcCgroup(text: string): { v1Memory?: string; v2?: string } {
  const found: { v1Memory?: string; v2?: string } = {};
  for (const line of text.split('\n')) {
    // hierarchy-ID:controller-list:path (the path may hold ':')
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, id, controllers, path] = match;
    if (id === '0' && controllers === '') found.v2 = path;
    else if (controllers.split(',').includes('memory')) found.v1Memory = path;
  }
  return found;
}

/** A mountinfo field, its spaces and backslashes unescaped (`\040`). */
function unescapeField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The cgroup mounts of /proc/PID/mountinfo: each one's root in its hierarchy and where it is mounted. */
export function parseCgroupMounts(text: string): { v1Memory?: Mount; v2?: Mount } {
  const found: { v1Memory?: Mount; v2?: Mount } = {};
  for (const line of text.split('\n')) {
    const [before, after] = line.split(' - ');
    if (after === undefined) continue;
    const fields = before.split(' ');
    const [fsType, , superOptions = ''] = after.split(' ');
    if (fields.length < 5) continue;
    const mount = { root: unescapeField(fields[3]), point: unescapeField(fields[4]) };
    if (fsType === 'cgroup2') found.v2 ??= mount;
    else if (fsType === 'cgroup' && superOptions.split(',').includes('memory')) found.v1Memory ??= mount;
  }
  return found;
}

interface Mount {
  readonly root: string;
  readonly point: string;
}

/**
 * The directory of the memory cgroup a process is in: v1's memory
 * hierarchy where it is mounted (a hybrid system has both), else v2's. The
 * path is relative to the mount's root (a container sees its own cgroup as
 * the root of the mount); undefined when the cgroup is not under it.
 */
export function memoryCgroupOf(procCgroup: string, mountinfo: string): MemoryCgroup | undefined {
  const paths = parseProcCgroup(procCgroup);
  const mounts = parseCgroupMounts(mountinfo);
  const within = (path: string | undefined, mount: Mount | undefined): string | undefined => {
    if (path === undefined || mount === undefined) return undefined;
    if (mount.root === '/') return join(mount.point, path);
    const inside = path === mount.root || path.startsWith(`${mount.root}/`);
    return inside ? join(mount.point, path.slice(mount.root.length)) : undefined;
  };
  const v1 = within(paths.v1Memory, mounts.v1Memory);
  if (v1 !== undefined) return { dir: v1, version: 1 };
  const v2 = within(paths.v2, mounts.v2);
  return v2 !== undefined ? { dir: v2, version: 2 } : undefined;
}

/** `oom_kill N` of v2's memory.events or v1's memory.oom_control; undefined when the kernel does not count them. */
export function parseOomKills(text: string): number | undefined {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

// v1 says "no limit" with the largest page-aligned number (9223372036854771712); v2 with "max".
const NO_LIMIT = 2 ** 62;

/** A byte count of memory.max / memory.limit_in_bytes / memory.peak; undefined for none ("max") or garbage. */
export function parseBytes(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  if (!trimmed || !/^\d+$/.test(trimmed)) return undefined;
  const bytes = Number(trimmed);
  return bytes >= NO_LIMIT ? undefined : bytes;
}

// node:fs's callback, not node:fs/promises: that module costs ~4 ms to load (see proc-read.ts).
function readText(path: string): Promise<string | undefined> {
  return new Promise((resolve) => readFile(path, 'latin1', (error, text) => resolve(error ? undefined : text)));
}

/** The memory cgroup gsup itself is in: read once at start (a process of the tree is gone when its death is seen). */
export async function ownMemoryCgroup(): Promise<MemoryCgroup | undefined> {
  const [cgroup, mountinfo] = await Promise.all([readText('/proc/self/cgroup'), readText('/proc/self/mountinfo')]);
  return cgroup !== undefined && mountinfo !== undefined ? memoryCgroupOf(cgroup, mountinfo) : undefined;
}

/**
 * Its OOM kill count, limit and peak now; undefined where the count cannot be read (the root cgroup has none).
 * `countOnly`: the count alone (limit and peak undefined), for the count at start, which says no line.
 */
export async function readMemoryCgroup(cgroup: MemoryCgroup, countOnly = false): Promise<OomReading | undefined> {
  const files =
    cgroup.version === 2
      ? ['memory.events', 'memory.max', 'memory.peak']
      : ['memory.oom_control', 'memory.limit_in_bytes', 'memory.max_usage_in_bytes'];
  const read = countOnly ? files.slice(0, 1) : files;
  const [events, limit, peak] = await Promise.all(read.map((file) => readText(join(cgroup.dir, file))));
  const oomKills = events === undefined ? undefined : parseOomKills(events);
  return oomKills === undefined ? undefined : { oomKills, limit: parseBytes(limit), peak: parseBytes(peak) };
}
