import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { IMAGE, podman, podmanTry, removeContainer, removePodmanConf } from '../../scripts/container.js';
import { ROOT } from './gsup.js';

// podman's private containers.conf (scripts/container.js) is removed when the file ends, before the
// temp-folder check (helpers/temp-folders.ts) looks: its after-hooks run after this file's own.
afterAll(removePodmanConf);

let count = 0;

/**
 * One container of the local image, detached, with gsup as its ENTRYPOINT:
 * the repository read-only at /src (the fixtures), a fresh folder at /out.
 */
export class Container {
  readonly name = `gsup-test-${process.pid}-${++count}`;
  readonly out = mkdtempSync(join(tmpdir(), 'gsup-out-'));

  constructor(
    command: string[],
    {
      env = {},
      network = 'none',
      publish = [],
      prepare,
    }: {
      env?: Record<string, string>;
      network?: string;
      /** `podman run -p` for each (HOST:HOSTPORT:PORT); set a network that can publish (bridge). */
      publish?: string[];
      prepare?: (out: string) => void;
    } = {},
  ) {
    // What the command needs at /out before it starts (files a dropped user can read).
    prepare?.(this.out);
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
    podman([
      'run',
      '-d',
      '--network',
      network,
      ...publish.flatMap((mapping) => ['-p', mapping]),
      '--name',
      this.name,
      '-v',
      `${ROOT}:/src:ro`,
      '-v',
      `${this.out}:/out`,
      ...envArgs,
      IMAGE,
      ...command,
    ]);
  }

  /** stdout and stderr so far, line by line. */
  logs(): string[] {
    const result = podmanTry(['logs', this.name]);
    return `${result.stdout}${result.stderr}`.split('\n').filter(Boolean);
  }

  count(pattern: RegExp): number {
    return this.logs().filter((line) => pattern.test(line)).length;
  }

  async waitForLog(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.logs().find((candidate) => pattern.test(candidate));
      if (line) return line;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${pattern} in the logs of ${this.name}:\n${this.logs().join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** `podman stop -t GRACE`: how long it took, in ms. */
  stop(graceSeconds: number): number {
    const started = Date.now();
    podman(['stop', '-t', String(graceSeconds), this.name], { timeout: (graceSeconds + 30) * 1000 });
    return Date.now() - started;
  }

  kill(signal: string): void {
    podman(['kill', '-s', signal, this.name]);
  }

  /** Waits for the container to exit; returns the status the runtime recorded. */
  wait(timeoutMs = 30_000): number {
    return Number(podman(['wait', this.name], { timeout: timeoutMs }).trim());
  }

  exitCode(): number {
    return Number(podman(['inspect', '-f', '{{.State.ExitCode}}', this.name]).trim());
  }

  exec(command: string[]): string {
    return podman(['exec', this.name, ...command]);
  }

  remove(): void {
    removeContainer(this.name);
    rmSync(this.out, { recursive: true, force: true });
  }
}
