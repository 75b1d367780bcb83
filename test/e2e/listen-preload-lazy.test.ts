import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/gsup.js';
import { ask, holding, WITH_PRELOAD } from '../helpers/hold-listen.js';

// The preload loads neither net nor child_process (listen-preload/on-load.ts): it wraps listen and spawn as the
// app loads them, or at once when an earlier preload loaded them first. Either way a listen on the held port
// takes the held socket, and a child spawned before it gets the sockets.

const folder = tempDir();
afterAll(() => folder.remove());

// Says what is loaded before and after each step, then spawns a child (which says its LISTEN_FDS), then listens
// on the held port and answers `pid N`.
const APP = `
const { EventEmitter } = require('node:events');
const loaded = (id) => process.moduleLoadList.includes('NativeModule ' + id);
// Before process.stdout: a pipe's is a net.Socket.
const before = 'before: net ' + loaded('net') + ', child_process ' + loaded('internal/child_process');
const say = (line) => process.stdout.write(line + '\\n');
say('ready (pid: ' + process.pid + ', lazy)');
say(before);
const { spawn } = require('node:child_process');
say('after: spawn in an emitter ' + ('spawn' in new EventEmitter()) + ', _listen2 ' + ('_listen2' in new EventEmitter()));
const child = spawn(process.execPath, ['-e', 'console.log("child LISTEN_FDS=" + process.env.LISTEN_FDS)'], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
child.on('exit', () => {
  const server = require('node:http').createServer((request, answer) => answer.end('pid ' + process.pid));
  server.listen(Number(process.env.PORT), () => say('listening (pid: ' + process.pid + ')'));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
});
`;

const reports = (lines: string[]) => lines.filter((line) => line.startsWith('report '));

describe('the preload and the modules it wraps', () => {
  it.each([
    ['loads neither net nor child_process itself; the app loads them, and both are wrapped', false],
    ['after a preload that loaded net and child_process first: both are wrapped all the same', true],
  ])('%s', async (_name, earlier) => {
    const first = join(folder.path, 'loads-net.cjs');
    writeFileSync(first, "require('node:net'); require('node:child_process');\n");
    const env = earlier ? { NODE_OPTIONS: `--require "${first}" ${WITH_PRELOAD}` } : {};
    const held = await holding(['node', '-e', APP], { env });
    const pid = await held.run.ready('lazy');
    await held.run.waitForLine(/^before: /);
    await held.run.waitForLine(/^listening \(pid: /);
    const out = held.run.stdout;
    expect(out, held.run.transcript()).toContain(`before: net ${earlier}, child_process ${earlier}`);
    // The accessors are gone once both modules loaded: EventEmitter.prototype is as Node made it.
    expect(out).toContain('after: spawn in an emitter false, _listen2 false');
    expect(out).toContain('child LISTEN_FDS=1');
    expect(await ask('http', held.port)).toBe(`pid ${pid}`);
    process.kill(pid, 'SIGTERM');
    const exit = await held.run.finished();
    expect(exit.code, held.run.transcript()).toBe(0);
    expect(reports(held.run.stdout)).toEqual([
      `report {"word":"listen","name":"${held.port}","pid":${pid}}`,
      `report {"word":"close","name":"${held.port}","pid":${pid}}`,
    ]);
    expect(held.run.stderr, held.run.transcript()).toEqual([]);
  });
});
