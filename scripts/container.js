// A real container runtime for the tests and the drain benchmark: rootful
// podman with runc, and a local image built from this machine's own binaries
// (no registry needed): node, npm, sh, the few tools the tests use,
// tini and dumb-init where present, each with the libraries ldd lists, and
// the packed gsup installed globally the way a user installs it.
// The container tests build and use one fixed tag (IMAGE); `node
// scripts/container.js` builds under a tag of its own each time, so that it
// never replaces the image the tests run, and removes no image.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const IMAGE = 'localhost/gsup-local:test';
// Marks the images built here, with the tag each was built under: a build of IMAGE removes only what an earlier
// build of IMAGE left (the image it replaced), never an image built under another tag or by anything else.
const LABEL = 'gsup-local=test';
const tagLabel = (tag) => `gsup-local.tag=${tag}`;
// Tools copied into the image when this machine has them.
const TOOLS = ['sh', 'env', 'sleep', 'setsid', 'tty', 'cat', 'tini', 'dumb-init'];

function which(name) {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** Why container tests cannot run here, or undefined. */
export function podmanSkipReason() {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (the tests use rootful podman)';
  for (const tool of ['podman', 'runc'])
    if (!which(tool)) return `${tool} is not installed (.ci/run installs podman and runc when it is root)`;
  const info = spawnSync('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}'], {
    env: podmanEnv(),
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (info.status !== 0) return `podman does not work here: ${(info.stderr || '').trim().split('\n').pop()}`;
  return undefined;
}

let conf;
/**
 * A private containers.conf: runc (crun fails on this machine's hybrid
 * cgroups) and rlimits within this machine's hard limits (no
 * CAP_SYS_RESOURCE for podman's defaults).
 */
export function podmanEnv() {
  if (!conf) {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const hard = (name) => new RegExp(`^${name}\\s+\\S+\\s+(\\S+)`, 'm').exec(limits)?.[1] ?? 'unlimited';
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
    const nofile = hard('Max open files') === 'unlimited' ? 1048576 : Number(hard('Max open files'));
    const nproc = hard('Max processes') === 'unlimited' ? pidMax : Math.min(Number(hard('Max processes')), pidMax);
    const folder = mkdtempSync(join(tmpdir(), 'gsup-podman-'));
    // Nothing left in the temp directory: the file goes with the process that wrote it, or sooner.
    if (!removing) process.once('exit', (removing = removePodmanConf));
    conf = join(folder, 'containers.conf');
    writeFileSync(
      conf,
      `[containers]\ndefault_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]\n[engine]\nruntime = "runc"\n`,
    );
  }
  return { ...process.env, CONTAINERS_CONF: conf };
}

let removing;
/** Removes the private containers.conf (a later podman call writes it again): a test file's end. */
export function removePodmanConf() {
  if (conf) rmSync(dirname(conf), { recursive: true, force: true });
  conf = undefined;
}

/** Runs podman; returns its stdout. */
export function podman(args, options = {}) {
  return execFileSync('podman', args, {
    env: podmanEnv(),
    encoding: 'utf8',
    timeout: 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
}

/** podman that may fail: { status, stdout, stderr }. */
export function podmanTry(args, options = {}) {
  const result = spawnSync('podman', args, { env: podmanEnv(), encoding: 'utf8', timeout: 60_000, ...options });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** Copies a binary and every library ldd lists for it, at the same paths. */
function copyWithLibraries(rootfs, source, target = source) {
  const into = join(rootfs, target);
  mkdirSync(dirname(into), { recursive: true });
  copyFileSync(realpathSync(source), into);
  chmodSync(into, 0o755);
  const ldd = spawnSync('ldd', [source], { encoding: 'utf8' });
  for (const match of (ldd.stdout ?? '').matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) {
    const library = match[1];
    const libraryTarget = join(rootfs, library);
    if (existsSync(libraryTarget)) continue;
    mkdirSync(dirname(libraryTarget), { recursive: true });
    copyFileSync(realpathSync(library), libraryTarget);
  }
}

/** A tag of its own for one build outside the tests: the time and the pid, so that two builds never share one. */
export function ownTag(now = new Date(), pid = process.pid) {
  return `localhost/gsup-local:build-${now.toISOString().replace(/\D/g, '').slice(0, 14)}-${pid}`;
}

/**
 * Builds the image under `tag` (a few seconds): node at /usr/local/bin, npm and npx, the
 * tools above, and `npm install -g` of gsup's own package (`npm pack`).
 * ENTRYPOINT ["gsup", "--"], as the README's Dockerfile has it.
 * Returns what it holds: { tini, dumbInit } when they were copied.
 */
export function buildImage(tag = IMAGE) {
  const work = mkdtempSync(join(tmpdir(), 'gsup-image-'));
  const rootfs = join(work, 'rootfs');
  try {
    for (const dir of [
      'bin',
      'usr/bin',
      'usr/local/bin',
      'usr/local/lib/node_modules',
      'etc',
      'proc',
      'sys',
      'dev',
      'root',
      'out',
      'src',
    ]) {
      mkdirSync(join(rootfs, dir), { recursive: true });
    }
    mkdirSync(join(rootfs, 'tmp'), { mode: 0o1777 });
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\n');
    copyWithLibraries(rootfs, process.execPath, '/usr/local/bin/node');
    const held = {};
    for (const tool of TOOLS) {
      const path = which(tool);
      if (!path) continue;
      copyWithLibraries(rootfs, path, tool === 'sh' ? '/bin/sh' : `/usr/bin/${tool}`);
      if (tool === 'tini') held.tini = true;
      if (tool === 'dumb-init') held.dumbInit = true;
    }
    // npm and npx, from the host's npm.
    const npmCli = realpathSync(which('npm'));
    const npmDir = dirname(dirname(npmCli));
    cpSync(npmDir, join(rootfs, 'usr/local/lib/node_modules/npm'), { recursive: true });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
    // gsup as a user installs it: its packed tarball, with its dependencies.
    const packed = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop();
    execFileSync(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        join(rootfs, 'usr/local'),
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        join(work, packed),
      ],
      {
        cwd: work,
        stdio: 'ignore',
        timeout: 180_000,
      },
    );
    const tar = join(work, 'rootfs.tar');
    execFileSync('tar', ['-C', rootfs, '-cf', tar, '.']);
    // The image this one replaces under IMAGE, if an earlier build of IMAGE made it: once the tag moves it
    // would be left behind as <none>.
    const replaced = tag === IMAGE ? imageId(tag, true) : undefined;
    podman(
      [
        'import',
        '--change',
        `LABEL ${LABEL}`,
        '--change',
        `LABEL ${tagLabel(tag)}`,
        '--change',
        'ENTRYPOINT ["gsup", "--"]',
        '--change',
        'ENV PATH=/usr/local/bin:/usr/bin:/bin',
        '--change',
        'ENV HOME=/root',
        tar,
        tag,
      ],
      { timeout: 180_000 },
    );
    if (tag !== IMAGE) return held;
    // What IMAGE's builds left: the image replaced now, and any an earlier build of IMAGE could not remove.
    // Not forced: an image a container still runs stays, until a build after that container is gone.
    const dangling = podmanTry([
      'images',
      '-q',
      '--no-trunc',
      '--filter',
      'dangling=true',
      '--filter',
      `label=${LABEL}`,
      '--filter',
      `label=${tagLabel(IMAGE)}`,
    ]);
    const left = new Set(dangling.stdout.split('\n').filter(Boolean));
    if (replaced && replaced !== imageId(tag)) left.add(replaced);
    for (const id of left) podmanTry(['rmi', id]);
    return held;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The full id of the image tagged `tag` (with `ours`: only if a build of that tag here made it), or undefined. */
function imageId(tag, ours = false) {
  const format = `{{.Id}} {{index .Labels "gsup-local.tag"}}`;
  const found = podmanTry(['image', 'inspect', '--format', format, tag]);
  if (found.status !== 0) return undefined;
  const [id, madeAs] = found.stdout.trim().split(' ');
  return id && (!ours || madeAs === tag) ? id : undefined;
}

/** Removes a container, whatever state it is in. */
export function removeContainer(name) {
  podmanTry(['rm', '-f', '-t', '0', name]);
}

// `node scripts/container.js` (as root, with podman and runc): builds the image under a tag of its own
// (ownTag), never the tests' IMAGE, and prints that tag.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const reason = podmanSkipReason();
  if (reason) {
    console.error(`cannot build the image: ${reason}`);
    process.exit(1);
  }
  const tag = ownTag();
  buildImage(tag);
  console.log(tag);
}
