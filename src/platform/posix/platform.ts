import { childProcess } from '../builtins.js';
import { childByNumber, sendSignal, watchSigchld } from '../kill.js';
import { isAlive, type Platform, type ProcessInfo, type SignalName } from '../types.js';

// Where there is no /proc (macOS, the BSDs): one `ps` spawn per snapshot.
// pidtree would give pid and ppid only; the engine also needs the process
// group (to signal a group only when every member is ours) and the start time
// (to tell a reused pid), so this asks ps for all of them at once.
// Every ps still running is gsup's own child: none of them is reported (nor
// signalled), whichever look they belong to.
const helpers = new Set<number>();

function runPs(args: string[], attempt = 1): Promise<ProcessInfo[]> {
  return new Promise((resolve, reject) => {
    const child = childProcess().execFile(
      'ps',
      args,
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, LC_ALL: 'C' } },
      (error, stdout) => {
        const found = (stdout ?? '')
          .split('\n')
          .flatMap((line) => parsePsLine(line) ?? [])
          .filter((info) => !helpers.has(info.pid));
        if (child.pid !== undefined) helpers.delete(child.pid);
        // ps -p exits 1 when the pid is gone: that is an answer. No output at all is not.
        if (error && !stdout && args[0] === '-A') {
          if (attempt < 3) resolve(runPs(args, attempt + 1));
          else reject(new Error(`ps failed: ${error.message}`));
          return;
        }
        resolve(found);
      },
    );
    if (child.pid !== undefined) helpers.add(child.pid);
  });
}

export function parsePsLine(line: string): ProcessInfo | undefined {
  const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
  if (!match) return undefined;
  const started = Date.parse(match[5]);
  return {
    pid: Number(match[1]),
    ppid: Number(match[2]),
    pgid: Number(match[3]),
    sid: -1, // not portable in ps; the engine does not need it here
    state: match[4][0],
    startTime: Number.isNaN(started) ? 0 : started,
    name: '',
  };
}

const columns = ['-o', 'pid=,ppid=,pgid=,stat=,lstart='];

/**
 * No pidfds here: the processes as they are now (one `ps` for the whole
 * batch, read immediately before the kills), so a pid that died and was
 * reused since the look (another start time) is not signalled.
 */
function stillThere(processes: readonly ProcessInfo[]): Map<number, ProcessInfo> {
  const args = ['-p', processes.map((info) => info.pid).join(','), ...columns];
  let output = '';
  try {
    output = childProcess().execFileSync('ps', args, {
      encoding: 'latin1',
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? ''); // exit 1: some are gone
  }
  const now = new Map<number, ProcessInfo>();
  for (const line of output.split('\n')) {
    const info = parsePsLine(line);
    if (info && isAlive(info)) now.set(info.pid, info);
  }
  return now;
}

function signalChecked(seen: readonly ProcessInfo[], signal: SignalName, group: boolean): number {
  if (seen.length === 0) return 0;
  const now = stillThere(seen);
  let reached = 0;
  for (const info of seen) {
    const current = now.get(info.pid);
    if (!current || current.startTime !== info.startTime || (group && current.pgid !== info.pgid)) continue;
    if (sendSignal(group ? -info.pgid : info.pid, signal)) reached++;
  }
  return reached;
}

export const posixPlatform: Platform = {
  spawnWithExeca: false,
  canSignal: true,
  async listProcesses() {
    return runPs(['-A', ...columns]);
  },
  async processInfo(pid) {
    return (await runPs(['-p', String(pid), ...columns]))[0];
  },
  startTimeNow() {
    return Date.now(); // start times are ps's lstart, parsed to epoch milliseconds
  },
  async readCommandLine() {
    return undefined; // would cost a spawn per pid; the summary shows the pid alone
  },
  kill: sendSignal,
  ...childByNumber,
  signalProcesses(processes, signal) {
    return signalChecked(processes, signal, false);
  },
  signalGroup(leader, signal) {
    return leader.pgid > 0 && leader.pid === leader.pgid && signalChecked([leader], signal, true) > 0;
  },
  sendMoment() {
    // lstart counts whole seconds: the moment too, cut down (no pid counter to tell one second's forks apart).
    return { tick: Math.floor(Date.now() / 1000) * 1000, lastPid: undefined, pidMax: undefined };
  },
  watchChildren: watchSigchld,
};
