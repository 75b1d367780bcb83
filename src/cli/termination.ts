// node:fs/promises through its lazy property: loaded (~4 ms) only where there is a termination log.
import { constants, existsSync, promises as fs } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { SupervisorResult } from '../engine/config/api.js';
import { describeEnd } from '../engine/machine/format.js';
import { escapeControls, type Logger, type LogLevel } from '../output/log.js';
import { UsageError } from '../options/errors.js';

// The termination message: one short text on why gsup ended, written once at
// its end where Kubernetes reads it (`terminationMessagePath`, shown by
// `kubectl describe pod`). Kubernetes keeps 4,096 bytes of it.

/** Where Kubernetes mounts the file by default. */
export const KUBERNETES_TERMINATION_LOG = '/dev/termination-log';
// 4,096 bytes with the final newline.
export const MAX_BYTES = 4095;
// One line of the message, at most (a stop summary names ten command lines).
const LINE_BYTES = 1024;
// The write may wait this long (a file on a hung mount): a failed write is one warning, never another status.
const WRITE_MS = 1000;

// Beside warnings and errors, the lines that say why a run ended: a stop, its summary, a third signal.
const KEPT = new Set(['stop', 'stopped', 'kill-now', 'restart-cancelled', 'status-behind']);

/** `text` in at most `max` bytes of UTF-8, cut between characters (with `…` when cut). */
export function truncateUtf8(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = Math.max(0, max - 3); // room for the ellipsis
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // not inside a character
  return `${bytes.subarray(0, end).toString('utf8')}…`;
}

/**
 * The message: the lines of the last run that say why it ended, then gsup's
 * status. Too long: the first line (the cause) and the latest that fit.
 */
export function terminationMessage(notes: readonly string[], result: SupervisorResult): string {
  const end = result.error ?? `the command ${describeEnd(result)}`;
  const last = truncateUtf8(`gsup exited ${result.exitCode}: ${end}`, LINE_BYTES);
  const lines = notes.map((note) => truncateUtf8(note, LINE_BYTES));
  const size = () => Buffer.byteLength([...lines, last].join('\n'));
  if (size() > MAX_BYTES) lines.splice(1, 0, '…');
  while (size() > MAX_BYTES && lines.length > 2) lines.splice(2, 1);
  return truncateUtf8([...lines, last].join('\n'), MAX_BYTES);
}

/**
 * Keeps the log lines of the current run that may say why gsup ended (a new run starts them again, a reload's
 * once it is the current run).
 */
export class TerminationNotes {
  readonly notes: string[] = [];

  constructor(logger: Logger) {
    logger.listen((level, event, message) => this.heard(level, event, message));
  }

  heard(level: LogLevel, event: string, message: string): void {
    // A reload: the next run is the current one once it is ready, or once the old one exited first.
    if (event === 'spawn' || event === 'reload-ready' || event === 'reload-exited') this.notes.length = 0;
    // A reload's lines speak of the other run (its failure, its retiring): never of the current one.
    else if (event.startsWith('reload')) return;
    else if (level === 'warn' || level === 'error' || KEPT.has(event)) this.notes.push(escapeControls(message));
  }
}

/**
 * Where the message goes: a path given (resolved now: gsup moves to /),
 * which must be writable (else a usage error now, not a lost message at the
 * end, weeks later); none given, Kubernetes' file when it exists.
 */
export async function terminationLogPath(
  given: string | undefined,
  what = '--termination-log',
): Promise<string | undefined> {
  if (given === undefined) return (await kubernetesFile()) ? KUBERNETES_TERMINATION_LOG : undefined;
  if (given.trim() === '') throw new UsageError(`empty value for ${what}: a path is needed`);
  const path = resolve(given);
  const verdict = await writable(path);
  if (verdict === true) return path;
  throw new UsageError(`cannot write the termination log ${path} (${what}): ${verdict}`);
}

/** Kubernetes' file, only where it exists (the kubelet mounts it): never created. */
async function kubernetesFile(): Promise<boolean> {
  // A look in /dev (a local tmpfs) cannot hang: no trip through libuv's pool before the first spawn.
  if (!existsSync(KUBERNETES_TERMINATION_LOG)) return false;
  return (await writable(KUBERNETES_TERMINATION_LOG)) === true;
}

/** true, or why not. A missing file may be created where its directory is writable. */
async function writable(path: string): Promise<true | string> {
  try {
    if ((await fs.stat(path)).isDirectory()) return 'a directory';
    await fs.access(path, constants.W_OK);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    if (code !== 'ENOENT') return code;
    try {
      await fs.access(dirname(path), constants.W_OK);
      return true;
    } catch (inner) {
      return `its directory: ${(inner as NodeJS.ErrnoException).code ?? String(inner)}`;
    }
  }
}

/** Written once, replacing what was there, without waiting forever; a failure is one warning. */
export async function writeTerminationLog(path: string, message: string, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((done) => (timer = setTimeout(() => done(`no answer in ${WRITE_MS}ms`), WRITE_MS)));
  const write = (async () => {
    // Non-blocking open: a FIFO with no reader answers at once (ENXIO) instead of holding gsup.
    const { O_WRONLY, O_CREAT, O_TRUNC, O_NONBLOCK, O_NOCTTY } = constants;
    const file = await fs.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY, 0o644);
    try {
      await file.writeFile(`${message}\n`);
    } finally {
      await file.close();
    }
    return undefined;
  })().catch((error: NodeJS.ErrnoException) => error.code ?? error.message);
  const failure = await Promise.race([write, late]).finally(() => clearTimeout(timer));
  if (failure === undefined) return;
  logger.warn('termination-log', `cannot write the termination log ${path}: ${failure}`, { path, error: failure });
}
