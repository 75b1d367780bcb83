import { childProcess } from '../../platform/builtins.js';
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Platform } from '../../platform/index.js';
import { countEpipe } from '../../platform/sigpipe.js';
import type { HealthState } from '../machine/values.js';

/** Health checks, Docker's names and defaults: every probe given runs on one schedule. */
export interface HealthConfig {
  /** Healthy when it exits 0 within the timeout (`sh -c`, a process group of its own). */
  cmd?: string;
  /** Healthy on a 200–399 answer within the timeout (Kubernetes' httpGet); a redirect is not followed. */
  url?: string;
  /** A heartbeat file the app touches: healthy while its mtime is younger than `maxAgeMs`. */
  file?: string;
  maxAgeMs: number;
  intervalMs: number;
  timeoutMs: number;
  /** Failures in a row that make the command unhealthy. */
  retries: number;
  /** Failures in this time after a start do not count; a success ends it. */
  startPeriodMs: number;
  /** The interval while the status is still `starting`, inside the start period (Docker 25's --start-interval). */
  startIntervalMs: number;
}

export interface ProbeResult {
  ok: boolean;
  /** What the probe saw: `exit 1: <last output>`, `HTTP 503`, `timed out after 5s`, `mtime 42s old`. */
  detail: string;
}

/** What a probe needs of the supervisor: the start directory, and its process bookkeeping for a probe command. */
export interface ProbeContext {
  platform: Platform;
  /** The command's start directory: a relative --health-file is its. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A probe command was spawned (Node reaps it; it is no part of the tree) / was reaped by Node (its pid is free). */
  spawned(pid: number): void;
  reaped(pid: number): void;
}

const OUTPUT_KEPT = 200;
// After the probe exits, its last words are read this long at most: a process it left may hold its output open.
const OUTPUT_GRACE_MS = 100;

/**
 * `sh -c CMD` in a group of its own; the round ends at its exit (or the
 * timeout), whatever it left holding its output. Its group is SIGKILLed at
 * the timeout, and at sh's exit, through the pidfd taken at the spawn (it
 * reaches that group while any member is left, never a later one; without
 * pidfds, by number, in the callback that reaped sh: members left in the
 * group keep its id from being reused). sh stays Node's until Node has
 * reaped it, timed out or not: gsup's reaper must never take its status.
 */
function commandProbe(cmd: string, timeoutMs: number, context: ProbeContext, abort: AbortSignal): Promise<ProbeResult> {
  return new Promise((done) => {
    const startedAt = Date.now();
    const child = childProcess().spawn('sh', ['-c', cmd], {
      cwd: context.cwd,
      env: context.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const pid = child.pid;
    // While certain: Node cannot have reaped it yet.
    const held = pid === undefined ? undefined : context.platform.holdChild(pid);
    if (pid !== undefined) context.spawned(pid);
    let exited = false;
    const killGroup = () => held !== undefined && context.platform.signalChild(held, 'SIGKILL', true, true);
    let drain: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      abort.removeEventListener('abort', onAbort);
      child.stdout!.destroy();
      child.stderr!.destroy();
      done(result);
    };
    const timer = setTimeout(() => {
      if (!exited) killGroup();
      settle({ ok: false, detail: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    const onAbort = () => {
      if (!exited) killGroup();
      settle({ ok: false, detail: 'stopped' });
    };
    abort.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error) => settle({ ok: false, detail: error.message }));
    child.once('exit', (code, signal) => {
      exited = true;
      killGroup();
      if (held !== undefined) context.platform.releaseChild(held);
      if (pid !== undefined) context.reaped(pid);
      const verdict = (): ProbeResult => {
        const last = output.trim().split('\n').pop() ?? '';
        return code === 0
          ? { ok: true, detail: 'exit 0' }
          : { ok: false, detail: `${signal ? `killed by ${signal}` : `exit ${code}`}${last ? `: ${last}` : ''}` };
      };
      child.once('close', () => settle(verdict()));
      drain = setTimeout(
        () => settle(verdict()),
        Math.max(0, Math.min(OUTPUT_GRACE_MS, timeoutMs - (Date.now() - startedAt))),
      );
    });
  });
}

/**
 * GET the URL (no connection kept): healthy on 200–399 (Kubernetes'
 * httpGet); a redirect is an answer, not followed.
 */
async function urlProbe(url: string, timeoutMs: number, abort: AbortSignal): Promise<ProbeResult> {
  const { get } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((done) => {
    const request = get(
      url,
      { agent: false, signal: AbortSignal.any([abort, AbortSignal.timeout(timeoutMs)]) },
      (response) => {
        // The status is the answer: the body is not read (an endless one would keep the socket).
        response.destroy();
        const status = response.statusCode ?? 0;
        done({ ok: status >= 200 && status < 400, detail: `HTTP ${status}` });
      },
    );
    request.once('error', (error) => {
      countEpipe(error); // a SIGPIPE of gsup's own (the request written to a server gone): never forwarded
      const timedOut = error.name === 'AbortError' && !abort.aborted;
      done({
        ok: false,
        detail: timedOut ? `timed out after ${timeoutMs} ms` : ((error as NodeJS.ErrnoException).code ?? error.message),
      });
    });
  });
}

function fileProbe(path: string, maxAgeMs: number): ProbeResult {
  try {
    const ageMs = Date.now() - statSync(path).mtimeMs;
    return ageMs <= maxAgeMs
      ? { ok: true, detail: `touched ${Math.round(ageMs)} ms ago` }
      : { ok: false, detail: `${path} last touched ${Math.round(ageMs)} ms ago` };
  } catch (error) {
    return { ok: false, detail: `${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}` };
  }
}

/** Runs every configured probe at once; healthy when all are. */
export async function probeAll(config: HealthConfig, context: ProbeContext, abort: AbortSignal): Promise<ProbeResult> {
  const results: Array<Promise<ProbeResult>> = [];
  if (config.cmd !== undefined) results.push(commandProbe(config.cmd, config.timeoutMs, context, abort));
  if (config.url !== undefined) results.push(urlProbe(config.url, config.timeoutMs, abort));
  if (config.file !== undefined) {
    const path = isAbsolute(config.file) ? config.file : resolve(context.cwd, config.file);
    results.push(Promise.resolve(fileProbe(path, config.maxAgeMs)));
  }
  const all = await Promise.all(results);
  const failed = all.filter((result) => !result.ok);
  return failed.length === 0
    ? { ok: true, detail: all.map((result) => result.detail).join('; ') }
    : { ok: false, detail: failed.map((result) => result.detail).join('; ') };
}

// The first check of a run comes this soon at most: an app that is up at once is ready within about a second.
const FIRST_CHECK_MS = 1000;

/**
 * Docker's rules over probe results: failures in the start period do not
 * count (a success ends it); `retries` failures in a row make it unhealthy.
 * And readiness's: until the first pass of a run, checks come every start
 * interval (the first within a second), and no failure counts before
 * Docker's own first check would have come (one interval): a healthy app is
 * ready within seconds, a slow one is given what Docker gives it.
 */
export class HealthVerdicts {
  state: HealthState = 'starting';
  failures = 0;
  private startedAt = 0;
  private started = false;
  private checked = false;

  constructor(private readonly config: HealthConfig) {}

  /** A new run: the start period begins again. */
  reset(now: number): void {
    this.state = 'starting';
    this.failures = 0;
    this.startedAt = now;
    this.started = false;
    this.checked = false;
  }

  /**
   * A reload handed over: the checks begin for the new run, start period included, but the verdict stays (it took
   * over a serving run: /readyz stays 200 until its own checks say otherwise).
   */
  handOver(now: number): void {
    const { state } = this;
    this.reset(now);
    this.state = state;
  }

  /** No pass yet, inside the start period or the first interval: failures do not count, checks come sooner. */
  private starting(now: number): boolean {
    return !this.started && now - this.startedAt < Math.max(this.config.startPeriodMs, this.config.intervalMs);
  }

  /** The time to the next round: the first soon, then the start interval while starting, else the interval. */
  nextIntervalMs(now: number): number {
    const soon = Math.min(this.config.startIntervalMs, this.config.intervalMs);
    if (!this.checked) return Math.min(FIRST_CHECK_MS, soon);
    return this.starting(now) ? soon : this.config.intervalMs;
  }

  /** Counts one result; returns the state it leads to, and whether the failure counted. */
  judge(result: ProbeResult, now: number): { state: HealthState; counted: boolean } {
    this.checked = true;
    if (result.ok) {
      this.started = true;
      this.failures = 0;
      this.state = 'healthy';
      return { state: this.state, counted: false };
    }
    if (this.starting(now)) return { state: this.state, counted: false };
    this.failures++;
    if (this.failures >= this.config.retries) this.state = 'unhealthy';
    else if (this.state === 'healthy') this.state = 'failing';
    return { state: this.state, counted: true };
  }
}
