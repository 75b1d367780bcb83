import type { SignalName } from '../../platform/types.js';
import { readiness, type Readiness } from '../machine/runs/readiness.js';
import type { State } from '../machine/state.js';
import type { HealthState } from '../machine/values.js';

/**
 * What the orchestrator may know of a supervision, as the shell last
 * published it: readiness and the figures `/metrics` shows. The status
 * endpoint only reads it; nothing here touches the loop.
 */
export class StatusBoard {
  readiness: Readiness = { ready: false, reason: 'starting' };
  commandUp = false;
  restarts = 0;
  lastExitCode: number | undefined;
  treeProcesses = 0;
  /** Set by the shell: a look at the tree now (off the signal path); false when none will come (the end). */
  lookAtTree?: () => boolean;
  /** Set by the shell under --listen: connections waiting in each held socket's queue, by name (the kernel's). */
  listenQueue?: () => Array<[string, number]>;
  private treeLookedAt = -Infinity;
  private readonly treeWaiters = new Set<() => void>();
  lastStopSeconds: number | undefined;
  readonly healthChecks = { pass: 0, fail: 0 };
  /** Processes of the tree the kernel's OOM killer killed (deaths.ts). */
  oomKills = 0;
  readonly forwarded = new Map<SignalName, number>();
  /** Reloads by result, under --reload-signal (set by the shell: the metric is shown only then). */
  reloads?: { ok: number; failed: number; killed: number };

  /** After each step: readiness, restarts (a reload's run is none, unless its old run exited first), reloads. */
  observe(state: State, health: HealthState | undefined, commandUp: boolean): void {
    this.readiness = readiness(state, health);
    const { runs, reloads } = state.tally;
    this.restarts = Math.max(0, runs - 1 - reloads.runs);
    this.commandUp = commandUp;
    if (this.reloads) this.reloads = { ok: reloads.ok, failed: reloads.failed, killed: reloads.killed };
  }

  /** A look at the tree, published: how many of it are alive. */
  treeLooked(alive: number): void {
    this.treeProcesses = alive;
    this.treeLookedAt = performance.now();
    for (const waiter of this.treeWaiters) waiter();
  }

  /**
   * Before a scrape: looks happen only when gsup needs one (a signal, a
   * stop), so a running app's tree is looked at now, unless the last look is
   * younger than `maxAgeMs`; waited for `timeoutMs` at most.
   */
  async freshTree(maxAgeMs = 1000, timeoutMs = 1000): Promise<void> {
    if (performance.now() - this.treeLookedAt <= maxAgeMs || !this.lookAtTree?.()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.treeWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.treeWaiters.add(done);
    });
  }

  stopTook(ms: number): void {
    this.lastStopSeconds = ms / 1000;
  }

  countForward(signal: SignalName): void {
    this.forwarded.set(signal, (this.forwarded.get(signal) ?? 0) + 1);
  }

  /** Prometheus text format 0.0.4: each metric with HELP and TYPE. */
  metrics(): string {
    const lines: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    metric('gsup_restarts_total', 'counter', 'Restarts of the command since gsup started.', [['', this.restarts]]);
    metric('gsup_command_up', 'gauge', 'Whether the command is running (1) or not (0).', [
      ['', this.commandUp ? 1 : 0],
    ]);
    metric('gsup_ready', 'gauge', 'Whether /readyz answers 200 (1) or 503 (0).', [['', this.readiness.ready ? 1 : 0]]);
    metric('gsup_health_checks_total', 'counter', 'Health check rounds, by result.', [
      ['{result="pass"}', this.healthChecks.pass],
      ['{result="fail"}', this.healthChecks.fail],
    ]);
    metric(
      'gsup_last_exit_code',
      'gauge',
      "The exit status of the command's last run (absent before the first exit).",
      this.lastExitCode === undefined ? [] : [['', this.lastExitCode]],
    );
    metric(
      'gsup_tree_processes',
      'gauge',
      'Processes of the tree alive (looked at for each scrape, at most a second old).',
      [['', this.treeProcesses]],
    );
    metric(
      'gsup_signals_forwarded_total',
      'counter',
      'Signals gsup forwarded to the tree, by signal.',
      [...this.forwarded].map(([signal, count]) => [`{signal="${signal}"}`, count]),
    );
    const oom = "Processes of the tree killed by the kernel's OOM killer.";
    metric('gsup_oom_kills_total', 'counter', oom, [['', this.oomKills]]);
    if (this.reloads) {
      const { ok, failed, killed } = this.reloads;
      const help =
        'Reloads (--reload-signal) by result: old run retired, SIGKILLed at its kill timeout, new run failed.';
      metric('gsup_reloads_total', 'counter', help, [
        ['{result="ok"}', ok],
        ['{result="killed"}', killed],
        ['{result="failed"}', failed],
      ]);
    }
    if (this.listenQueue) {
      const queue = 'Connections waiting to be accepted on each held socket (--listen), from the kernel.';
      const label = (name: string) => `{name="${name.replace(/[\\"]/g, (char) => `\\${char}`)}"}`;
      metric(
        'gsup_listen_queue',
        'gauge',
        queue,
        this.listenQueue().map(([name, count]) => [label(name), count]),
      );
    }
    metric(
      'gsup_stop_duration_seconds',
      'gauge',
      'How long the last stop took (absent before the first stop).',
      this.lastStopSeconds === undefined ? [] : [['', this.lastStopSeconds]],
    );
    return `${lines.join('\n')}\n`;
  }
}
