import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allProcs, related } from './proc.js';
import { testFolder } from './temp-folders.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const GSUP = join(ROOT, 'bin/gsup.cjs');
export const fixture = (name: string) => join(ROOT, 'fixtures', name);
export const PRINTER = fixture('printer.js');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which then closes. */
  stdin?: string;
  /** Under a pty (`script`): stdin stays open for `write()`, and lines lose the terminal's echo of ^C and ^Z, \r and colours. */
  pty?: boolean;
  cwd?: string;
  namespaced?: boolean;
  /** An fd to give the process as its stderr (then not read here). */
  stderr?: number;
}

/** One process under test (usually gsup) with its output read line by line. */
export class Run {
  readonly child: ChildProcess;
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<Exit>;
  private listeners = new Set<() => void>();
  exit?: Exit;

  /** Pids printed by fixtures are of another PID namespace: never use them from here. */
  readonly namespaced: boolean;
  private readonly pty: boolean;

  constructor(command: string, args: string[], options: RunOptions = {}) {
    this.namespaced = options.namespaced ?? false;
    this.pty = options.pty ?? false;
    this.child = spawn(command, args, {
      stdio: [options.stdin === undefined && !this.pty ? 'ignore' : 'pipe', 'pipe', options.stderr ?? 'pipe'],
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      cwd: options.cwd ?? ROOT,
    });
    if (options.stdin !== undefined) this.child.stdin!.end(options.stdin);
    this.read(this.child.stdout!, this.stdout);
    if (this.child.stderr) this.read(this.child.stderr, this.stderr);
    // 'close' waits for the output pipes too; a process left behind (--on-exit
    // exit) may hold them open, so after 'exit' the output gets until it has
    // been quiet for a second (a flood's 30,000 lines may still be arriving).
    const closed = new Promise<void>((resolve) => this.child.on('close', () => resolve()));
    const quiet = () =>
      new Promise<void>((resolve) => {
        let timer = setTimeout(resolve, 1000);
        const again = () => (clearTimeout(timer), (timer = setTimeout(resolve, 1000)));
        this.child.stdout!.on('data', again);
        this.child.stderr?.on('data', again);
      });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        const exit = { code, signal };
        void Promise.race([closed, quiet()]).then(() => {
          this.exit = exit;
          this.notify();
          resolve(exit);
        });
      });
    });
    runs.add(this);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private read(stream: NodeJS.ReadableStream, into: string[]): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      // A terminal echoes Ctrl+C as ^C before the next output on the same line.
      into.push(
        ...(this.pty
          ? parts.map((line) =>
              line
                .replace(/\r/g, '')
                .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
                .replace(/\^[A-Z]/g, ''),
            )
          : parts),
      );
      this.notify();
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Waits for a line of stdout (or stderr) matching `pattern`; fails after `timeoutMs`. */
  waitForLine(
    pattern: RegExp,
    { stream = 'stdout', timeoutMs = 10_000 }: { stream?: 'stdout' | 'stderr'; timeoutMs?: number } = {},
  ): Promise<RegExpMatchArray> {
    const lines = stream === 'stdout' ? this.stdout : this.stderr;
    return new Promise((resolve, reject) => {
      const check = () => {
        for (const line of lines) {
          const match = pattern.exec(line);
          if (match) {
            cleanup();
            resolve(match);
            return;
          }
        }
        if (this.exit) {
          cleanup();
          reject(
            new Error(
              `exited (${JSON.stringify(this.exit)}) before a line matched ${pattern} on ${stream}:\n${this.transcript()}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs}ms waiting for ${pattern} on ${stream}:\n${this.transcript()}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Waits for `ready (pid: N)` of a fixture and returns N. */
  async ready(label = 'printer'): Promise<number> {
    const match = await this.waitForLine(new RegExp(`^ready \\(pid: (\\d+), ${label}\\)`));
    return Number(match[1]);
  }

  /** Lines of stdout matching `pattern`. */
  count(pattern: RegExp): number {
    return this.stdout.filter((line) => pattern.test(line)).length;
  }

  /** Waits for the exit, failing after `timeoutMs`. */
  async finished(timeoutMs = 15_000): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`did not exit within ${timeoutMs}ms:\n${this.transcript()}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Types into the pty (`pty` runs). */
  write(text: string): void {
    this.child.stdin!.write(text);
  }

  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  transcript(): string {
    return `--- stdout\n${this.stdout.join('\n')}\n--- stderr\n${this.stderr.join('\n')}`;
  }
}

const runs = new Set<Run>();
const fixturePids = new Set<number>();

/** Starts gsup with these arguments (`node`: flags for gsup's own node, before its script). */
export function gsup(args: string[], options?: RunOptions & { node?: string[] }): Run {
  return new Run(process.execPath, [...(options?.node ?? []), GSUP, ...args], options);
}

/** Whether this machine lets us make a PID namespace (`unshare --pid --fork --mount-proc`). */
export const unshareWorks: boolean = (() => {
  try {
    execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
})();

/** `nsenter` is there (to enter a namespace as `docker exec` does), beside unshare. */
export const nsenterWorks =
  unshareWorks &&
  (() => {
    try {
      execFileSync('nsenter', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

/** gsup as PID 1 of a new PID namespace, the way a container runs it. */
export function gsupAsPid1(args: string[], options: RunOptions & { node?: string[] } = {}): Run {
  const node = [process.execPath, ...(options.node ?? [])];
  return new Run('unshare', ['--pid', '--fork', '--mount-proc', ...node, GSUP, ...args], {
    ...options,
    namespaced: true,
  });
}

/** The pid, seen from here, of gsup running as PID 1 under `unshare` (unshare's child). */
export function hostPidOfPid1(run: Run): number | undefined {
  return allProcs().find((proc) => proc.ppid === run.pid)?.pid;
}

/** Every pid a run's fixtures announced (`ready (pid: N ...)`). */
function announcedPids(run: Run): number[] {
  if (run.namespaced) return [];
  return run.stdout.flatMap((line) => {
    const match = /^ready \(pid: (\d+)/.exec(line);
    return match ? [Number(match[1])] : [];
  });
}

/**
 * For afterEach: SIGKILL everything the test started (gsup, its tree, the
 * fixtures it announced, their sessions), and return what was still alive,
 * so a test can also assert that nothing was left behind.
 */
export function killEverything(): number[] {
  const roots: number[] = [];
  for (const run of runs) {
    if (run.child.pid && !run.exit) roots.push(run.child.pid);
    for (const pid of announcedPids(run)) fixturePids.add(pid);
  }
  // A fixture pid that is gone may have been reused: only ours are touched.
  const ours = [...fixturePids].filter(isOurs);
  roots.push(...ours);
  // One the test SIGKILLed itself may not be gone yet (a SIGKILL takes every thread down first): not left behind.
  const found = related(roots, ours).filter((proc) => proc.pid !== process.pid);
  const left = found.filter((proc) => !dying(proc.pid));
  for (const proc of found) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  runs.clear();
  fixturePids.clear();
  for (const remove of markerDirs.splice(0)) remove();
  return left.map((proc) => proc.pid);
}

/** Whether this process is on its way out: exiting (PF_EXITING in its stat flags), or a SIGKILL pending. */
function dying(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const [state, , , , , , flags] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X' || (Number(flags) & 0x4) !== 0) return true;
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const pending = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].map((match) =>
      BigInt(`0x${match[1]}`),
    );
    return pending.some((mask) => (mask & (1n << 8n)) !== 0n); // SIGKILL: bit 9 - 1
  } catch {
    return true; // gone
  }
}

/** Live processes of a run's tree right now (gsup's descendants and announced fixtures). */
export function leftovers(run: Run): number[] {
  const ours = announcedPids(run).filter(isOurs);
  return related(run.exit ? ours : [run.pid, ...ours]).map((proc) => proc.pid);
}

// The checkout, and the copies of it another user can read (helpers/anyone.ts): a fixture runs from either.
const places = new Set([ROOT]);

/** A copy of (part of) the checkout whose fixtures are ours (kept after its removal: the leak check comes later). */
export function ownPlace(path: string): void {
  places.add(path);
}

function isOurs(pid: number): boolean {
  const line = commandLine(pid);
  return [...places].some((place) => line.includes(place));
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

const markerDirs: Array<() => void> = [];

/** A path where a fixture writes its "clean exit" marker; removed by killEverything(). */
export function markerPath(): string {
  const dir = tempDir();
  markerDirs.push(dir.remove);
  return join(dir.path, 'clean-exit');
}

/** A fresh folder in the temp directory, removed after the test (or the file) that made it, or sooner by `remove`. */
export function tempDir(): { path: string; remove: () => void } {
  const path = testFolder('gsup-test-');
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
