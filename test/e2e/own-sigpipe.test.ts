import { get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { PRINTER, gsup } from '../helpers/gsup.js';
import { freePort } from '../helpers/net.js';

// gsup listens for SIGPIPE to forward it. A write of its own to a peer that
// is gone raises SIGPIPE in gsup too: that one is gsup's, never the app's.

const HOST = '127.0.0.1';

/** Resolves once the status endpoint answers. */
async function listening(port: number): Promise<void> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const answered = (response: IncomingMessage) => (response.resume(), resolve(response.statusCode ?? 0));
      const request = get({ host: HOST, port, path: '/livez' }, answered);
      request.on('error', () => resolve(0));
    });
    if (status === 200) return;
    if (performance.now() > deadline) throw new Error(`/livez on ${port} never answered`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Many requests in one go, then gone without reading an answer: gsup
 * writes answers to a closed connection (EPIPE; the kernel raises SIGPIPE
 * in gsup). Resolves once the connection is closed on this side.
 */
function pipelinedThenGone(port: number, requests: number): Promise<void> {
  return new Promise((resolve) => {
    const request = 'GET /metrics HTTP/1.1\r\nHost: gsup\r\n\r\n';
    const socket = connect(port, HOST, () => socket.end(request.repeat(requests)));
    socket.on('finish', () => socket.destroy());
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

describe("SIGPIPE of gsup's own", () => {
  it('a /metrics client gone before its answers: not forwarded; a SIGPIPE sent to gsup still is, once', async () => {
    const port = await freePort();
    const run = gsup(['--status-port', String(port), '--status-host', HOST, '--', 'node', PRINTER]);
    await run.ready();
    await listening(port);
    run.signal('SIGPIPE'); // someone else's: forwarded
    await run.waitForLine(/^signal: SIGPIPE /);
    for (let i = 0; i < 20; i++) await pipelinedThenGone(port, 20);
    await listening(port); // the server has been through the connections above
    run.signal('SIGUSR1');
    await run.waitForLine(/^signal: SIGUSR1 /);
    expect(run.count(/^signal: SIGPIPE /)).toBe(1);
    run.signal('SIGTERM');
    expect((await run.finished()).code).toBe(0);
  });
});
