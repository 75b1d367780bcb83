import type { Platform, ProcessInfo, SignalName } from '../../src/platform/index.js';

/** An in-memory process table: unit tests see every kill(2) and need no real signals. */
export class FakePlatform implements Platform {
  readonly canSignal = true;
  readonly spawnWithExeca = false;
  readonly processes = new Map<number, ProcessInfo>();
  readonly kills: Array<{ pid: number; signal: SignalName }> = [];
  /** What a process does when it gets a signal; default: dies on SIGKILL only. */
  onSignal: (info: ProcessInfo, signal: SignalName) => void = (info, signal) => {
    if (signal === 'SIGKILL') this.processes.delete(info.pid);
  };

  add(info: Partial<ProcessInfo> & { pid: number; ppid: number }): ProcessInfo {
    const full: ProcessInfo = { pgid: info.pid, sid: info.pid, state: 'S', startTime: 1000 + info.pid, name: 'fake', ...info };
    this.processes.set(full.pid, full);
    return full;
  }

  async listProcesses() {
    return [...this.processes.values()].map((info) => ({ ...info }));
  }
  async processInfo(pid: number) {
    const info = this.processes.get(pid);
    return info && { ...info };
  }
  readonly commandLines = new Map<number, string>();
  signalPending?: (pid: number, signal: SignalName) => boolean;
  commandLine(pid: number) {
    return this.commandLines.get(pid) ?? `cmd-${pid}`;
  }
  kill(pid: number, signal: SignalName) {
    this.kills.push({ pid, signal });
    const hit = pid < 0 ? [...this.processes.values()].filter((info) => info.pgid === -pid) : [this.processes.get(pid)].filter(Boolean);
    for (const info of hit) this.onSignal(info as ProcessInfo, signal);
    return hit.length > 0;
  }
  watchChildren() {
    return () => {};
  }
}
