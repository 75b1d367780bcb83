import type { HeldSocketCalls } from '../../platform/held-sockets.js';
import type { HeldInput } from '../machine/state.js';
import { parseReport, tellLine, type TellWord } from './wire.js';

// A line longer than this is no word (wire.ts): it is dropped, and so is what follows it up to its end.
const LINE_MAX = 4096;

/**
 * gsup's end of run `run`'s report channel (a socketpair: the other end is at GSUP_REPORT_FD in the run),
 * read in the event loop: each word as an input of the step, for this run only; the channel's end (every
 * holder gone) as `report-closed`. It never keeps gsup alive (unref'd). `tell()` writes gsup's word to the run
 * (never waited for: a run that reads none loses nothing by it); `close()` lets it go.
 */
export function readReports(
  channel: HeldSocketCalls['channel'],
  fd: number,
  run: number,
  names: readonly string[],
  heard: (input: HeldInput) => void,
) {
  let partial = '';
  let dropping = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    heard({ kind: 'report-closed', run });
  };
  const read = (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (dropping) dropping = false;
      else word(line);
    }
    if (partial.length > LINE_MAX) ((partial = ''), (dropping = true));
  };
  const word = (line: string) => {
    const said = parseReport(line);
    // A word of a name gsup does not hold, or of no process, is no word.
    if (!said || said.pid <= 0 || (said.word !== 'conns' && !names.includes(said.name))) return;
    if (said.word === 'conns') heard({ kind: 'conns', run, pid: said.pid, count: said.count });
    else if (said.word === 'listen') heard({ kind: 'socket-taken', run, name: said.name, pid: said.pid, seen: 'word' });
    else heard({ kind: 'socket-closed', run, name: said.name, pid: said.pid });
  };
  const opened = channel(fd, read, end);
  return {
    tell(word: TellWord): void {
      if (!ended) opened.write(tellLine(word));
    },
    close(): void {
      ended = true;
      opened.close();
    },
  };
}
