import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir } from './gsup.js';

export const PM2 = join(ROOT, 'node_modules/.bin/pm2');
export const PM2_RUNTIME = join(ROOT, 'node_modules/.bin/pm2-runtime');
export const APP = join(ROOT, 'fixtures/app.js');

// Homes not yet disposed of: a run cut short (the worker's exit before the hooks) still `pm2 kill`s their daemons.
const live = new Set<Pm2Home>();
process.once('exit', () => live.forEach((home) => home.dispose()));

/** A PM2_HOME of its own for one test, and the app's signal log in it. Never ~/.pm2. */
export class Pm2Home {
  readonly path: string;
  readonly log: string;
  private readonly remove: () => void;

  constructor() {
    const dir = tempDir();
    this.path = dir.path;
    this.remove = dir.remove;
    this.log = join(this.path, 'app.log');
    live.add(this);
  }

  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return { PM2_HOME: this.path, APP_LOG: this.log, ...extra };
  }

  lines(): string[] {
    return existsSync(this.log) ? readFileSync(this.log, 'utf8').split('\n').filter(Boolean) : [];
  }

  /** Pids of the apps that logged `ready` (a restarted app logs a new one). */
  readyPids(): number[] {
    return this.lines().flatMap((line) => (line.startsWith('ready ') ? [Number(line.slice(6))] : []));
  }

  /** How many `signal SIG pid` lines the app with this pid logged. */
  signals(pid: number): string[] {
    return this.lines().flatMap((line) => {
      const match = /^signal (\w+) (\d+)$/.exec(line);
      return match && Number(match[2]) === pid ? [match[1]] : [];
    });
  }

  daemonPid(): number | undefined {
    const file = join(this.path, 'pm2.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8')) : undefined;
  }

  pm2Log(): string {
    const file = join(this.path, 'pm2.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  /** After each test (afterLeakCheck): `pm2 kill` for this home (a no-op when no daemon runs), then remove it. */
  dispose(): void {
    live.delete(this);
    if (existsSync(join(this.path, 'pm2.pid')) || existsSync(join(this.path, 'rpc.sock'))) {
      try {
        execFileSync(process.execPath, [PM2, 'kill'], {
          env: { ...process.env, PM2_HOME: this.path },
          stdio: 'ignore',
          timeout: 20_000,
        });
      } catch {
        // already gone
      }
    }
    this.remove();
  }
}
