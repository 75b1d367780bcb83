import { Chalk, type ChalkInstance } from 'chalk';

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
  /** Colour on or off; by default on only for a TTY stderr, with NO_COLOR / FORCE_COLOR honoured. */
  color?: boolean;
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
  private readonly chalk: ChalkInstance;

  constructor(options: LoggerOptions = {}) {
    this.verbosity = options.verbosity ?? 0;
    this.format = options.format ?? 'text';
    this.write = options.write ?? ((line) => process.stderr.write(line));
    const color = options.color ?? colorWanted(process.env, process.stderr.isTTY === true);
    this.chalk = new Chalk({ level: color ? 1 : 0 });
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
    const paint = level === 'error' ? this.chalk.red : level === 'warn' ? this.chalk.yellow : this.chalk.dim;
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

/** A logger that says nothing (the library's default). */
export const silentLogger = new Logger({ verbosity: -2, write: () => {} });
