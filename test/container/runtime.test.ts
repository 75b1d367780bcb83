import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../helpers/net.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE, buildImage, podmanEnv, podmanSkipReason } from '../../scripts/container.js';
import { ptySkipReason, quote } from '../helpers/pty.js';
import { Container } from '../helpers/podman.js';
import { Run } from '../helpers/gsup.js';

// gsup where its users run it: PID 1 of a real container (rootful podman,
// runc), ENTRYPOINT ["gsup", "--"], stopped by the runtime with its grace
// period and its recorded exit status. The image is built from this
// machine's binaries with the packed gsup installed in it (scripts/container.js).

const skipReason = podmanSkipReason();
// Where CI installed podman (.ci/run), these tests must run: a broken runtime fails them.
const required = process.env.GSUP_CONTAINER_TESTS === 'required';
if (skipReason) console.log(`container tests ${required ? 'cannot run' : 'skipped'}: ${skipReason}`);

if (required && skipReason) {
  describe('container runtime (required here)', () => {
    it('podman works', () => {
      expect.fail(`GSUP_CONTAINER_TESTS=required, but: ${skipReason}`);
    });
  });
}

const containers: Container[] = [];
function container(command: string[], options?: ConstructorParameters<typeof Container>[1]): Container {
  const created = new Container(command, options);
  containers.push(created);
  return created;
}

afterEach(() => {
  for (const created of containers.splice(0)) created.remove();
});

const PRINTER = '/src/fixtures/printer.js';

/** The status of one GET from the host (0: no answer). */
function httpStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => (req.destroy(), resolve(0)));
    req.end();
  });
}

describe.skipIf(skipReason !== undefined)('gsup as PID 1 of a podman container', () => {
  beforeAll(() => {
    buildImage();
  }, 240_000);

  it('sh -c without exec: podman stop → the app gets one SIGTERM and finishes its cleanup; the status is the app’s (0), well within the grace period', async () => {
    const box = container(['sh', '-c', `node ${PRINTER} --cleanup 500 --marker /out/done`]);
    await box.waitForLog(/^ready \(pid: \d+, printer\)/);
    const took = box.stop(5);
    expect(box.count(/^signal: SIGTERM /)).toBe(1);
    expect(box.count(/^clean exit /)).toBe(1);
    expect(readFileSync(join(box.out, 'done'), 'utf8')).toMatch(/^clean exit \d+/);
    expect(box.exitCode()).toBe(0); // dash's sh -c died of the SIGTERM; gsup waited for node, reaped it, and has its 0
    expect(took).toBeGreaterThanOrEqual(500);
    expect(took).toBeLessThan(3000);
  });

  it('with exec: the status is the app’s own (0)', async () => {
    const box = container(['sh', '-c', `exec node ${PRINTER} --cleanup 200`]);
    await box.waitForLog(/^ready /);
    box.stop(5);
    expect(box.count(/^signal: SIGTERM /)).toBe(1);
    expect(box.exitCode()).toBe(0);
  });

  it('an app that ignores SIGTERM, no option set, podman stop (10 s): gsup’s SIGKILL and summary at 8 s', async () => {
    const box = container(['node', PRINTER, '--ignore-stop']);
    await box.waitForLog(/^ready /);
    const took = box.stop(10);
    expect(took).toBeGreaterThanOrEqual(7900);
    expect(took).toBeLessThan(9900);
    expect(box.exitCode()).toBe(137);
    const logs = box.logs().join('\n');
    expect(logs).toContain('kill timeout (8.00s) expired');
    expect(logs).toMatch(/stopped in 8\.\d+s: 0 exited by themselves, 1 killed: \d+ \(node \/src\/fixtures\/printer/);
  });

  it('an app that ignores SIGTERM, GSUP_KILL_TIMEOUT=2s, podman stop -t 10: gsup’s SIGKILL at ~2 s, not the runtime’s at 10 s; status 137', async () => {
    const box = container(['node', PRINTER, '--ignore-stop'], { env: { GSUP_KILL_TIMEOUT: '2s' } });
    await box.waitForLog(/^ready /);
    const took = box.stop(10);
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(6000);
    expect(box.exitCode()).toBe(137);
    const logs = box.logs().join('\n');
    expect(logs).toContain('kill timeout (2.00s) expired');
    expect(logs).toMatch(/1 killed: \d+ \(node \/src\/fixtures\/printer\.js --ignore-stop\)/);
  });

  it('a daemon that escaped the command’s group gets the SIGTERM too, once', async () => {
    const box = container(['node', '/src/fixtures/daemonize.js']);
    await box.waitForLog(/^ready \(pid: \d+, daemon\)/);
    await box.waitForLog(/^ready \(pid: \d+, daemonize\)/);
    box.stop(5);
    expect(box.count(/^signal: SIGTERM .*daemon\)/)).toBe(1);
    expect(box.count(/^clean exit .*daemon\)/)).toBe(1);
  });

  it('500 orphans: gsup reaps them (at most 2 zombies at a look)', async () => {
    const script = 'i=0; while [ $i -lt 500 ]; do (sleep 0.01 &); i=$((i+1)); done; echo spawned; exec sleep 100';
    const box = container(['sh', '-c', script]);
    await box.waitForLog(/^spawned$/, 30_000);
    const countZombies = `let n=0;for(const e of require('fs').readdirSync('/proc'))if(/^\\d+$/.test(e))try{if(/\\) Z /.test(require('fs').readFileSync('/proc/'+e+'/stat','latin1')))n++}catch{}console.log(n)`;
    await new Promise((resolve) => setTimeout(resolve, 300)); // the last sleeps end
    expect(Number(box.exec(['node', '-e', countZombies]).trim())).toBeLessThanOrEqual(2);
    box.stop(5);
    expect(box.exitCode()).toBe(143);
  });

  it('podman kill -s INT: the app decides (printer exits 0; sleep dies of it, 130)', async () => {
    const printer = container(['node', PRINTER]);
    await printer.waitForLog(/^ready /);
    printer.kill('INT');
    expect(printer.wait()).toBe(0);
    expect(printer.count(/^signal: SIGINT /)).toBe(1);

    const sleeper = container(['sleep', '100']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    sleeper.kill('INT');
    expect(sleeper.wait()).toBe(130);
  });

  it('exit 3 is recorded as 3', () => {
    const box = container(['sh', '-c', 'exit 3']);
    expect(box.wait()).toBe(3);
  });

  it.skipIf(ptySkipReason !== undefined)(
    'podman run -it: the command has the terminal as its controlling terminal',
    async () => {
      const name = `gsup-test-${process.pid}-tty`;
      const script = 'tty; if (exec 3</dev/tty) 2>/dev/null; then echo ctty-ok; else echo ctty-none; fi';
      const line = ['podman', 'run', '-it', '--rm', '--network', 'none', '--name', name, IMAGE, 'sh', '-c', script]
        .map(quote)
        .join(' ');
      const run = new Run('script', ['-qefc', line, '/dev/null'], {
        pty: true,
        env: { CONTAINERS_CONF: podmanEnv().CONTAINERS_CONF },
      });
      expect((await run.finished(30_000)).code).toBe(0);
      expect(run.stdout.join('\n')).toMatch(/^\/dev\/pts\/\d+$/m);
      expect(run.stdout).toContain('ctty-ok');
      expect(run.stdout.join('\n')).not.toContain('controlling terminal');
    },
  );

  it('--status-port published (host network): /readyz is 503 from the host right after podman stop sends SIGTERM, while the app still answers', async () => {
    const port = await freePort();
    const appPort = await freePort();
    const box = container(['node', '/src/fixtures/drain-server.js'], {
      network: 'host',
      env: {
        GSUP_STATUS_PORT: String(port),
        GSUP_STATUS_HOST: '127.0.0.1',
        GSUP_STOP_DELAY: '3s',
        PORT: String(appPort),
        DELAY_MS: '1',
      },
    });
    await box.waitForLog(/^ready \(pid: \d+, drain-server\)/);
    expect(await httpStatus(port, '/readyz')).toBe(200);
    // podman stop blocks until the container is gone: run it beside the test.
    const stopping = spawn('podman', ['stop', '-t', '10', box.name], { env: podmanEnv(), stdio: 'ignore' });
    const stopped = new Promise((resolve) => stopping.once('exit', resolve));
    const deadline = Date.now() + 5000;
    while ((await httpStatus(port, '/readyz')) !== 503) {
      if (Date.now() > deadline) throw new Error('/readyz never turned 503');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await httpStatus(appPort, '/')).toBe(200); // the stop delay: the app still serves
    await stopped;
    expect(box.exitCode()).toBe(0);
  });
});
