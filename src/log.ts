import { writeSync } from 'node:fs';
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

/** gsup's own log lines on stderr: `[gsup] ...`, or one JSON object per line. */
export class Logger {
  readonly verbosity: number;
  private readonly format: LogFormat;
  private readonly write: (line: string) => void;
  private readonly paint?: ChalkInstance;

  constructor(options: LoggerOptions = {}) {
    this.verbosity = options.verbosity ?? 0;
    this.format = options.format ?? 'text';
    this.write = options.write ?? writeStderr;
    this.paint = options.paint;
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= this.verbosity;
  }

  log(level: LogLevel, event: string, message: string, fields: LogFields = {}): void {
    if (!this.enabled(level)) return;
    if (this.format === 'json') {
      this.write(`${JSON.stringify({ time: new Date().toISOString(), level, event, message, ...fields })}\n`);
      return;
    }
    if (!this.paint) {
      this.write(`[gsup] ${message}\n`);
      return;
    }
    const paint = level === 'error' ? this.paint.red : level === 'warn' ? this.paint.yellow : this.paint.dim;
    this.write(`${paint('[gsup]')} ${level === 'error' || level === 'warn' ? paint(message) : message}\n`);
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

/** Straight to fd 2, synchronously (a line written just before exit is not lost), without building process.stderr. */
function writeStderr(line: string): void {
  try {
    writeSync(2, line);
  } catch {
    process.stderr.write(line); // a non-blocking stderr said EAGAIN
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
