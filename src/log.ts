import { writeSync } from 'node:fs';
import { raisedOwnSigpipe } from './platform/sigpipe.js';
import { isTerminal } from './platform/terminal.js';
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
  /** Where lines go (stderr). */
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

/** gsup's own log lines on stderr: `[gsup] ...`, or one JSON object per line. */
export class Logger {
  readonly verbosity: number;
  private readonly lineFormat: LogFormat;
  private readonly write: (line: string) => void;
  private readonly paint?: ChalkInstance;

  constructor(options: LoggerOptions = {}) {
    this.verbosity = options.verbosity ?? 0;
    this.lineFormat = options.format ?? 'text';
    this.write = options.write ?? writeStderr;
    this.paint = options.paint;
  }

  /** Set once a write failed (the reader of stderr is gone): logging is silenced, nothing else changes. */
  private silenced = false;

  enabled(level: LogLevel): boolean {
    return !this.silenced && RANK[level] <= this.verbosity;
  }

  log(level: LogLevel, event: string, message: string, fields: LogFields = {}): void {
    if (!this.enabled(level)) return;
    try {
      this.write(this.format(level, event, message, fields));
    } catch (error) {
      // EPIPE (the reader is gone), EBADF (stderr closed), anything: a log
      // line must never stop the supervision. One failed write silences the rest.
      this.silenced = true;
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') raisedOwnSigpipe(); // not the user's: never forwarded
    }
  }

  /** Text: the message escaped (by construction: no call site can forget). */
  private format(level: LogLevel, event: string, message: string, fields: LogFields): string {
    if (this.lineFormat === 'json') return `${escapeJson(JSON.stringify({ time: new Date().toISOString(), level, event, message, ...fields }))}\n`;
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
 * Straight to fd 2, synchronously (a line written just before exit is not
 * lost), without building process.stderr. Throws what the write threw
 * (EPIPE, EBADF), but for a non-blocking stderr that is full (EAGAIN): that
 * line is dropped rather than block gsup.
 */
function writeStderr(line: string): void {
  try {
    writeSync(2, line);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
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
