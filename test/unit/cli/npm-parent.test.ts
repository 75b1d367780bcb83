import { describe, expect, it } from 'vitest';
import { npmRunningGsup } from '../../../src/cli/npm-parent.js';

describe('npmRunningGsup: npm ran gsup itself as its script', () => {
  it.each([
    [{ npm_command: 'exec', npm_lifecycle_event: 'npx', npm_lifecycle_script: "'gsup'" }, 'npx (npm exec)'],
    [
      { npm_command: 'run-script', npm_lifecycle_event: 'start', npm_lifecycle_script: 'gsup -- node server.js' },
      'npm run start',
    ],
    [
      {
        npm_command: 'run-script',
        npm_lifecycle_event: 'start',
        npm_lifecycle_script: 'NODE_ENV=production exec node_modules/.bin/gsup -t 5s -- node server.js',
      },
      'npm run start',
    ],
  ])('%o: %s', (env, said) => {
    expect(npmRunningGsup(env)).toBe(said);
  });

  it.each([
    [{}],
    // npm test runs a test runner, which runs gsup: not npm's script.
    [{ npm_command: 'run-script', npm_lifecycle_event: 'test', npm_lifecycle_script: 'npm run build && vitest run' }],
    [{ npm_command: 'run-script', npm_lifecycle_event: 'start', npm_lifecycle_script: 'node gsup-like.js' }],
    [{ npm_lifecycle_script: 'gsup -- node server.js' }],
  ])('%o: none', (env) => {
    expect(npmRunningGsup(env)).toBeUndefined();
  });
});
