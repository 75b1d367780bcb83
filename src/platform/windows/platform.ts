import { childByNumber, sendSignal } from '../kill.js';
import type { Platform, ProcessInfo } from '../types.js';

// Windows has no signals, groups or sessions: the tree comes from pidtree, a
// stop is tree-kill (taskkill /T /F), and forwarding is best effort.
export const windowsPlatform: Platform = {
  spawnWithExeca: true,
  canSignal: false,
  async listProcesses() {
    // Loaded here: the other platforms never pay for them.
    const { default: pidtree } = await import('pidtree');
    const rows = (await pidtree(-1, { advanced: true })) as Array<{ ppid: number; pid: number }>;
    return rows.map(({ pid, ppid }): ProcessInfo => ({
      pid,
      ppid,
      pgid: pid,
      sid: -1,
      state: 'R',
      startTime: 0,
      name: '',
    }));
  },
  async processInfo(pid) {
    return (await this.listProcesses()).find((info) => info.pid === pid);
  },
  startTimeNow() {
    return Date.now();
  },
  async readCommandLine() {
    return undefined;
  },
  kill: sendSignal,
  ...childByNumber,
  // No signals and no start times here (tree-kill does the stop): by pid, best effort.
  signalProcesses(processes, signal) {
    return processes.filter((info) => sendSignal(info.pid, signal)).length;
  },
  signalGroup(leader, signal) {
    return sendSignal(leader.pid, signal);
  },
  watchChildren: () => () => {},
  async killTree(pid) {
    const { default: treeKill } = await import('tree-kill');
    return new Promise((resolve) => treeKill(pid, 'SIGKILL', () => resolve()));
  },
};
