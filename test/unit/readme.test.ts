import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/options/cli-options.js';
import { ROOT } from '../helpers/gsup.js';

// The Kubernetes manifest (docs/kubernetes.md), held to what gsup accepts and to itself.
describe('docs/kubernetes.md: the Kubernetes example', () => {
  const readme = readFileSync(join(ROOT, 'docs', 'kubernetes.md'), 'utf8');
  const manifest = /## Kubernetes\n\n```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

  it('gsup accepts its environment, --grace equals terminationGracePeriodSeconds, and the probes use the status port', async () => {
    const env = Object.fromEntries(
      [...manifest.matchAll(/\{ name: (GSUP_\w+), value: "([^"]*)" \}/g)].map((match) => [match[1], match[2]]),
    );
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['GSUP_GRACE', 'GSUP_STOP_DELAY', 'GSUP_STATUS_PORT']));
    const request = await parseCommandLine(['node', 'server.js'], env, '0.0.0', () => {});
    if (request.kind !== 'run') throw new Error('expected a run');
    const grace = Number(/terminationGracePeriodSeconds: (\d+)/.exec(manifest)?.[1]) * 1000;
    expect(request.options.grace).toBe(grace);
    expect(request.options.killTimeout + request.options.stopDelay).toBeLessThanOrEqual(grace);
    expect(request.options.status).toEqual({ port: Number(env.GSUP_STATUS_PORT), host: env.GSUP_STATUS_HOST });
    expect(manifest).toContain(`containerPort: ${env.GSUP_STATUS_PORT}`);
    expect(manifest).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/readyz, port: status \}/);
    expect(manifest).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/livez, port: status \}/);
    expect(manifest).toContain('command: ["gsup", "--"]');
  });
});

// GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces to hyphens.
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');

describe('README and docs/', () => {
  const files = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)];
  const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');
  const anchors = (file: string) =>
    new Set(
      [
        ...text(file)
          .replace(/```[\s\S]*?```/g, '')
          .matchAll(/^#+ (.*)$/gm),
      ].map((match) => slug(match[1])),
    );

  it('the README is read in five minutes: 300 lines at most, its first lines the two commands', () => {
    const readme = text('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme.split('\n').slice(2, 6).join('\n')).toBe(
      '```sh\nnpm ci && npm link && gsup -v -- node fixtures/printer.js   # set up, then run gsup (Ctrl+C stops it)\nnpm test                                                   # run the tests\n```',
    );
  });

  it('every relative link leads to a file that exists, and every #anchor to a heading in it', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const [, target] of text(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#');
        const resolved = path ? join(dirname(file), path) : file;
        if (!existsSync(join(ROOT, resolved))) broken.push(`${file}: ${target}`);
        else if (anchor && !anchors(resolved).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README links every file of docs/', () => {
    const readme = text('README.md');
    for (const file of files.filter((name) => name.startsWith('docs/'))) expect(readme).toContain(`(${file})`);
  });
});
