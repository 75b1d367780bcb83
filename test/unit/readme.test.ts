import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/options/cli-options.js';
import { ROOT } from '../helpers/gsup.js';

// The README's Kubernetes manifest, held to what gsup accepts and to itself.
describe('README: the Kubernetes example', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const manifest = /## Kubernetes\n\n```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

  it('gsup accepts its environment, --grace equals terminationGracePeriodSeconds, and the probes use the status port', async () => {
    const env = Object.fromEntries([...manifest.matchAll(/\{ name: (GSUP_\w+), value: "([^"]*)" \}/g)].map((match) => [match[1], match[2]]));
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['GSUP_GRACE', 'GSUP_STOP_DELAY', 'GSUP_STATUS_PORT']));
    const request = await parseCommandLine(['node', 'server.js'], env, '0.0.0', () => {});
    if (request.kind !== 'run') throw new Error('expected a run');
    const grace = Number(/terminationGracePeriodSeconds: (\d+)/.exec(manifest)?.[1]) * 1000;
    expect(request.options.grace).toBe(grace);
    expect(request.options.killTimeout + request.options.stopDelay).toBeLessThanOrEqual(grace);
    expect(request.options.status).toEqual({ port: Number(env.GSUP_STATUS_PORT), host: '0.0.0.0' });
    expect(manifest).toContain(`containerPort: ${env.GSUP_STATUS_PORT}`);
    expect(manifest).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/readyz, port: status \}/);
    expect(manifest).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/livez, port: status \}/);
    expect(manifest).toContain('command: ["gsup", "--"]');
  });
});
