import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { executable, onPath } from '../platform/which.js';

/**
 * The pm2 CLI that goes with the command: beside a `pm2`/`pm2-runtime` the
 * command names, else `pm2` on PATH, else the project's node_modules/.bin.
 */
export function findPm2Cli(command: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
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
  for (const candidate of candidates) {
    if (executable(candidate)) {
      try {
        return realpathSync(candidate);
      } catch {
        continue;
      }
    }
  }
  return undefined;
}
