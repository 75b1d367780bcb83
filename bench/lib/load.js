// Starting the load client (bench/lib/load-client.js) as a process of its own, for the restarts benchmark
// and its container test: the load's event loop then does nothing but the load.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exited, sleep } from './spawn.js';

const LOAD_CLIENT = fileURLToPath(new URL('./load-client.js', import.meta.url));

/**
 * Starts `one` one-connection and `keep` keep-alive clients against host:port; resolves once they run.
 * `stop()` ends the load and resolves with the client's counts (see load-client.js).
 */
export async function startLoad({ port, host = '127.0.0.1', one = 10, keep = 10 }) {
  const args = [LOAD_CLIENT, '--port', String(port), '--host', host, '--one', String(one), '--keep', String(keep)];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => (output += chunk));
  for (let waited = 0; !output.startsWith('started\n'); waited += 10) {
    if (child.exitCode !== null || waited > 10_000) {
      child.kill('SIGKILL');
      throw new Error(`the load client did not start: ${output}`);
    }
    await sleep(10);
  }
  let result;
  return {
    async stop() {
      if (result) return result;
      child.stdin.end('stop\n');
      await exited(child);
      const line = output.split('\n').find((each) => each.startsWith('{'));
      if (!line) throw new Error(`the load client printed no result: ${output}`);
      result = JSON.parse(line);
      return result;
    },
  };
}
