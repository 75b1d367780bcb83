import { afterEach, describe, expect, it } from 'vitest';
import { GSUP, PRINTER, Run, fixture, gsup } from '../helpers/gsup.js';
import { isAlive, related, waitFor } from '../helpers/proc.js';

// -p (tini's): gsup's parent is SIGKILLed; the kernel's parent-death signal
// is the only word gsup gets of it. The parent is a shell that starts gsup
// in the background, as tini's own test does with a parent it kills.

/** gsups whose parent the test killed: reparented away from the test, so not found by killEverything. */
const orphaned: number[] = [];

afterEach(() => {
  // Each with its tree (taken before the kill: the tree leaves gsup then).
  const left = related(orphaned.splice(0).filter(isAlive)).map((proc) => proc.pid);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left, 'gsups (and their trees) left behind').toEqual([]);
});

const quote = (text: string) => `'${text}'`;

/** A shell that starts each gsup command line in the background, says `gsup: PID` for each, and waits. */
function parentOf(lines: string[][], env: NodeJS.ProcessEnv = {}): Run {
  const started = (args: string[]) => `${[process.execPath, GSUP, ...args].map(quote).join(' ')} & echo "gsup: $!"`;
  const script = lines.map(started).join('; ');
  return new Run('sh', ['-c', `${script}; wait`], { env });
}

function gsupPids(run: Run): number[] {
  const pids = run.stdout.flatMap((line) => /^gsup: (\d+)$/.exec(line)?.[1] ?? []).map(Number);
  orphaned.push(...pids.filter((pid) => !orphaned.includes(pid)));
  return pids;
}

describe('-p, --pdeathsig', () => {
  it('-p SIGTERM: the parent SIGKILLed, the app gets SIGTERM once, gsup ends; one without -p stays', async () => {
    const parent = parentOf([
      ['-p', 'SIGTERM', '--', 'node', PRINTER, '--label', 'watched', '--cleanup', '300'],
      ['--', 'node', PRINTER, '--label', 'unwatched'],
    ]);
    await parent.ready('watched');
    await parent.ready('unwatched');
    await waitFor(() => gsupPids(parent).length === 2, 'both gsup pids');
    const [watched, unwatched] = gsupPids(parent);
    parent.signal('SIGKILL');
    const cleanExit = (label: string) => new RegExp(`^clean exit \\(pid: \\d+, ${label}\\)`);
    const over = (label: string, pid: number) => parent.count(cleanExit(label)) === 1 && !isAlive(pid);
    await waitFor(() => over('watched', watched), 'the watched tree to stop', 10_000);
    expect(parent.count(/^signal: SIGTERM \(pid: \d+, watched\)/), parent.transcript()).toBe(1);
    expect(parent.count(/^signal: .*, watched\)/)).toBe(1);
    // Without -p nothing told gsup: its tree runs on, untouched.
    expect(isAlive(unwatched)).toBe(true);
    expect(isAlive(await parent.ready('unwatched'))).toBe(true);
    expect(parent.count(/^signal: .*, unwatched\)/)).toBe(0);
    process.kill(unwatched, 'SIGTERM');
    await waitFor(() => over('unwatched', unwatched), 'the unwatched tree to stop', 10_000);
  });

  it("GSUP_PDEATHSIG=SIGUSR1 (tini's own test): another signal is forwarded, and gsup stays", async () => {
    const parent = parentOf([['--', 'node', PRINTER]], { GSUP_PDEATHSIG: 'SIGUSR1' });
    const app = await parent.ready();
    await waitFor(() => gsupPids(parent).length === 1, 'the gsup pid');
    const [pid] = gsupPids(parent);
    parent.signal('SIGKILL');
    await waitFor(() => parent.count(/^signal: SIGUSR1 /) === 1, 'SIGUSR1 at the app', 10_000);
    expect(isAlive(pid) && isAlive(app)).toBe(true);
    process.kill(pid, 'SIGTERM');
    await waitFor(() => parent.count(/^clean exit /) === 1 && !isAlive(pid), 'the tree to stop', 10_000);
    expect(parent.count(/^signal: SIGUSR1 /)).toBe(1);
  });

  it('a parent that died before -p was asked for counts as the signal: no command is started, gsup ends', async () => {
    // The kill comes after gsup's first line and before the request (gsup starts again without NODE_OPTIONS meanwhile).
    const killer = { NODE_OPTIONS: `--require ${fixture('parent-killer.cjs')}` };
    const parent = parentOf([['-p', 'TERM', '--', 'node', PRINTER]], killer);
    await waitFor(() => gsupPids(parent).length === 1, 'the gsup pid');
    const [pid] = gsupPids(parent);
    await waitFor(() => !isAlive(pid), 'gsup to end', 10_000);
    const line = /^\[gsup\] gsup's parent \(pid \d+\) died before -p SIGTERM was asked for: SIGTERM received$/;
    const said = parent.stderr.filter((text) => line.test(text));
    expect(said, parent.transcript()).toHaveLength(1);
    expect(parent.count(/^ready /)).toBe(0);
  });

  it('where the kernel cannot be asked (no koffi): one warning, and the command runs', async () => {
    const run = gsup(['-p', 'SIGTERM', '--', 'node', PRINTER], { env: { GSUP_FFI: '0' } });
    await run.ready();
    run.signal('SIGTERM');
    await run.finished();
    const line = /^\[gsup\] -p SIGTERM: gsup cannot ask for a signal on its parent's death: koffi could not be loaded/;
    expect(run.stderr.filter((text) => line.test(text))).toHaveLength(1);
  });

  it('refuses a signal gsup cannot take: SIGKILL, SIGSTOP, SIGCHLD; and a name it does not know', async () => {
    const hint = 'e.g. SIGTERM stops the tree';
    const refused = (given: string, what: string, signal: string) =>
      `gsup: invalid signal "${given}" for ${what}: gsup cannot handle ${signal}; ${hint}`;
    for (const [args, env, message] of [
      [['-p', 'KILL'], {}, refused('KILL', '--pdeathsig', 'SIGKILL')],
      [[], { GSUP_PDEATHSIG: '19' }, refused('19', 'GSUP_PDEATHSIG', 'SIGSTOP')],
      [['--pdeathsig', 'SIGCHLD'], {}, refused('SIGCHLD', '--pdeathsig', 'SIGCHLD')],
      [['-p', 'NOPE'], {}, 'gsup: invalid signal "NOPE" in --pdeathsig'],
    ] as Array<[string[], NodeJS.ProcessEnv, string]>) {
      const run = gsup([...args, '--', 'true'], { env });
      expect((await run.finished()).code).toBe(125);
      expect(run.stderr.filter((line) => line !== '')).toEqual([message]);
    }
  });
});
