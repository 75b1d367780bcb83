import { childProcess } from '../../platform/builtins.js';
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Pm2Proof } from '../machine/values.js';
import { writableByOthers } from '../../platform/trusted-path.js';
import { executable, onPath } from '../../platform/which.js';

/** The pm2 CLI that `pm2 kill` runs, found once at start; or why there is none. */
export type Pm2Cli = { path: string } | { why: string };

/**
 * The pm2 CLI that goes with the command: beside a `pm2`/`pm2-runtime` the
 * command names, else `pm2` on PATH, else the project's node_modules/.bin.
 * Looked for once, at start (once the first run has run a while: AfterStart), and taken only from where no
 * one but root and gsup's user can write (the file and every directory above
 * it): gsup runs it as its own user, and an app that dropped its privileges
 * must not be able to put code there. An app that runs as gsup's user could
 * do anything gsup can anyway.
 */
export function resolvePm2Cli(command: string, env: NodeJS.ProcessEnv, cwd: string): Pm2Cli {
  const candidates: string[] = [];
  if (/^pm2(-runtime|-docker|-dev)?$/.test(basename(command))) {
    const path = onPath(command, env, cwd);
    if (path) {
      candidates.push(join(dirname(path), 'pm2'));
      try {
        candidates.push(join(dirname(realpathSync(path)), 'pm2'));
      } catch {
        // a dangling link: the other candidates remain
      }
    }
  }
  const fromPath = onPath('pm2', env, cwd);
  if (fromPath) candidates.push(fromPath);
  candidates.push(join(cwd, 'node_modules', '.bin', 'pm2'));
  const refused: string[] = [];
  for (const candidate of candidates) {
    if (!executable(candidate)) continue;
    let path: string;
    try {
      path = realpathSync(candidate);
    } catch {
      continue;
    }
    const why = writableByOthers(path);
    if (why === undefined) return { path };
    refused.push(`${path} (${why})`);
  }
  if (refused.length === 0) return { why: 'pm2 CLI not found' };
  return { why: `pm2 CLI ${refused[0]} not used: others than root and gsup's user can change it` };
}

/** The path of the pm2 CLI `pm2 kill` would run, if any. */
export function findPm2Cli(command: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const cli = resolvePm2Cli(command, env, cwd);
  return 'path' in cli ? cli.path : undefined;
}

/**
 * `pm2 kill` for a proven God daemon's PM2_HOME: a child of gsup, so part of
 * the tree the stop waits for. As the daemon's own user when it is not
 * gsup's (libuv drops the supplementary groups then), never more; in `/`
 * (the home is absolute; a start directory that user may not enter).
 * Without the app's NODE_OPTIONS: the CLI is gsup's helper (a preload or an
 * inspector port of the app has no place in it).
 */
export function spawnPm2Kill(
  cli: string,
  proof: Pm2Proof,
  env: NodeJS.ProcessEnv,
  onExit: (pid: number) => void,
  onError: (error: Error) => void,
): number | undefined {
  const { NODE_OPTIONS: _app, ...own } = env;
  const child = childProcess().spawn(process.execPath, [cli, 'kill'], {
    env: { ...own, PM2_HOME: proof.home },
    cwd: '/',
    stdio: 'ignore',
    ...proof.user,
  });
  child.on('error', onError);
  child.on('exit', () => onExit(child.pid!));
  return child.pid;
}
