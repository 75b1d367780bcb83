import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../helpers/gsup.js';

// The README's install section, run as written, from a copy of this
// checkout (what a fresh clone holds): the commands come from the README
// itself, so the two cannot drift apart. The global install goes to a
// prefix of the test's own (npm_config_prefix), never the machine's.
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const block = /## Install\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
const commands = block
  .split('\n')
  .map((line) => line.replace(/\s+#.*$/, '').trim())
  .filter(Boolean);

let files: string[] = [];
try {
  files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
} catch {
  // not a git checkout: skipped below
}

const dir = tempDir();
// The copy's node_modules (npm ci: tens of thousands of files): removed in ~5 s, in over 30 s with the machine busy.
afterAll(() => dir.remove(), 180_000);

describe("the README's install section", () => {
  it.skipIf(files.length === 0)(
    `runs as written from a fresh copy: ${commands.join('; ')}${files.length === 0 ? ' (skipped: not a git checkout)' : ''}`,
    () => {
      expect(commands).toEqual([
        'npm ci && npm pack',
        'npm install --global ./gsup-0.1.0.tgz',
        'npm uninstall --global gsup',
        'npm install ./gsup-0.1.0.tgz',
        'npm uninstall gsup',
      ]);
      const clone = join(dir.path, 'clone');
      for (const file of files) {
        if (!existsSync(join(ROOT, file))) continue; // deleted, not yet committed
        mkdirSync(dirname(join(clone, file)), { recursive: true });
        copyFileSync(join(ROOT, file), join(clone, file));
      }
      const prefix = join(dir.path, 'global');
      const env = {
        ...process.env,
        npm_config_prefix: prefix,
        npm_config_prefer_offline: 'true',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
      };
      const sh = (command: string, cwd: string) =>
        execFileSync('sh', ['-c', command], {
          cwd,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 240_000,
          encoding: 'utf8',
        });
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

      const status = (bin: string) => spawnSync(bin, ['--', 'sh', '-c', 'exit 3'], { stdio: 'ignore' }).status;

      sh(commands[0], clone); // npm ci (which builds, through prepare) && npm pack
      expect(existsSync(join(clone, 'gsup-0.1.0.tgz'))).toBe(true);
      sh(commands[1], clone); // global
      const globalBin = join(prefix, 'bin', 'gsup');
      expect(execFileSync(globalBin, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
      expect(status(globalBin)).toBe(3);
      sh(commands[2], clone);
      expect(existsSync(globalBin)).toBe(false);

      const project = join(dir.path, 'project'); // in a project: the tarball copied there
      mkdirSync(project);
      copyFileSync(join(clone, 'gsup-0.1.0.tgz'), join(project, 'gsup-0.1.0.tgz'));
      sh('npm init -y', project);
      sh(commands[3], project);
      const localBin = join(project, 'node_modules', '.bin', 'gsup');
      expect(execFileSync(localBin, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
      expect(status(localBin)).toBe(3);
      sh(commands[4], project);
      expect(existsSync(localBin)).toBe(false);
    },
    300_000,
  );
});
