import { CallbackOutput, StderrOutput, type LogOutput } from './log-output.js';
import { isTerminal } from '../platform/terminal.js';
import type { ChalkInstance } from 'chalk';

export type LogLevel = 'error' | 'warn' | 'notice' | 'info' | 'debug';
export type LogFormat = 'text' | 'json';
export type LogFields = Record<string, unknown>;

// notice: the start of a stop and its summary — shown by default, like warnings.
const RANK: Record<LogLevel, number> = { error: -1, warn: 0, notice: 0, info: 1, debug: 2 };

export interface LoggerOptions {
  /** -1 quiet (errors only), 0 default, 1 `-v`, 2 `-vv`. */
  verbosity?: number;
  format?: LogFormat;
  /** Where lines go (default: stderr, never waited for; see log-output.ts). */
  write?: (line: string) => void;
  /** A chalk instance to colour with (see createLogger); none: no colour. */
  paint?: ChalkInstance;
}

export function colorWanted(env: NodeJS.ProcessEnv, isTTY: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR) return false;
  return isTTY;
}

// Control characters (C0, DEL, C1) are what a terminal acts on: a command
// line, a title or a probe's output may hold them (the tree writes those),
// and a log line must neither move the cursor nor begin a line of its own.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Each control character as a visible escape: `\x1b`, `\r`, `\n`. */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (char) => NAMED[char] ?? `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** JSON.stringify escapes C0 only: DEL and C1 too, as `\u007f`. */
function escapeJson(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// At the end, lines still waiting for stderr are waited for this long at most.
const FLUSH_MS = 1000;

/** gsup's own log lines on stderr: `[gsup] ...`, or one JSON object per line. */
export class Logger {
  readonly verbosity: number;
  private readonly lineFormat: LogFormat;
  private readonly output: LogOutput;
  private readonly paint?: ChalkInstance;
  /** Told of every line, shown or not (the termination log keeps a few: termination.ts). */
  private heard?: (level: LogLevel, event: string, message: string) => void;

  constructor(options: LoggerOptions = {}) {
    this.verbosity = options.verbosity ?? 0;
    this.lineFormat = options.format ?? 'text';
    this.paint = options.paint;
    const lost = (count: number) =>
      this.format('warn', 'log-lost', `${count} log lines lost (stderr full)`, { lost: count });
    this.output = options.write ? new CallbackOutput(options.write) : new StderrOutput(lost);
  }

  /** A failed write (the reader of stderr is gone) silences the log; nothing else changes. */
  enabled(level: LogLevel): boolean {
    return !this.output.broken && RANK[level] <= this.verbosity;
  }

  /** One listener for every line logged, at any level (the lines a caller skips below its level excepted). */
  listen(listener: (level: LogLevel, event: string, message: string) => void): void {
    this.heard = listener;
  }

  log(level: LogLevel, event: string, message: string, fields: LogFields = {}): void {
    this.heard?.(level, event, message);
    if (this.enabled(level)) this.output.write(this.format(level, event, message, fields));
  }

  /** One plain line (no `[gsup]`), whatever the verbosity: what a shell would say. */
  say(line: string): void {
    this.output.write(`${escapeControls(line)}\n`);
  }

  /**
   * The way to stderr found now (a spare moment of the start: AfterStart), not at the first line, which may be the
   * run's last word (`--listen`'s warning that no process took a socket), on the way to gsup's exit.
   */
  ready(): void {
    this.output.ready?.();
  }

  /** Resolves once every line is out, or after `timeoutMs` (stderr does not drain). */
  flush(timeoutMs = FLUSH_MS): Promise<void> {
    return this.output.flush(timeoutMs);
  }

  /** Text: the message escaped (by construction: no call site can forget). */
  private format(level: LogLevel, event: string, message: string, fields: LogFields): string {
    if (this.lineFormat === 'json') {
      return `${escapeJson(JSON.stringify({ time: new Date().toISOString(), level, event, message, ...fields }))}\n`;
    }
    const text = escapeControls(message);
    if (!this.paint) return `[gsup] ${text}\n`;
    const paint = level === 'error' ? this.paint.red : level === 'warn' ? this.paint.yellow : this.paint.dim;
    return `${paint('[gsup]')} ${level === 'error' || level === 'warn' ? paint(text) : text}\n`;
  }

  error(event: string, message: string, fields?: LogFields): void {
    this.log('error', event, message, fields);
  }
  warn(event: string, message: string, fields?: LogFields): void {
    this.log('warn', event, message, fields);
  }
  notice(event: string, message: string, fields?: LogFields): void {
    this.log('notice', event, message, fields);
  }
  info(event: string, message: string, fields?: LogFields): void {
    this.log('info', event, message, fields);
  }
  debug(event: string, message: string, fields?: LogFields): void {
    this.log('debug', event, message, fields);
  }
}

/**
 * A logger for stderr, coloured only on a TTY (NO_COLOR / FORCE_COLOR
 * honoured); chalk is loaded only then.
 */
export async function createLogger(options: Omit<LoggerOptions, 'paint'> = {}): Promise<Logger> {
  const color = options.format !== 'json' && colorWanted(process.env, await isTerminal(2));
  const paint = color ? new (await import('chalk')).Chalk({ level: 1 }) : undefined;
  return new Logger({ ...options, paint });
}

/** A logger that says nothing (the library's default). */
export const silentLogger = new Logger({ verbosity: -2, write: () => {} });
