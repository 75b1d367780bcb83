/**
 * The npm command that ran gsup as its script itself — `npx gsup …`
 * (npm_command "exec") or a package.json script that starts with gsup
 * (`"start": "gsup -- node server.js"`) — or undefined. npm (11) exits at
 * once on SIGTERM without waiting for its script: gsup and the app would be
 * left running as orphans, the very problem gsup solves. Only the script's
 * own first word counts: gsup started by a program an npm script runs (a
 * test runner) is not npm's script.
 */
export function npmRunningGsup(env: NodeJS.ProcessEnv): string | undefined {
  const script = env.npm_lifecycle_script;
  if (!script || !env.npm_command) return undefined;
  // Skip `exec` and VAR=value prefixes; the word may be quoted ('gsup', as npx writes it).
  const words = script
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/^['"]|['"]$/g, ''));
  const first = words.find((word) => word !== 'exec' && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
  if (!first || !/(^|\/)gsup(\.cjs)?$/.test(first)) return undefined;
  return env.npm_command === 'exec'
    ? 'npx (npm exec)'
    : `npm ${env.npm_command === 'run-script' ? `run ${env.npm_lifecycle_event ?? ''}`.trim() : env.npm_command}`;
}
