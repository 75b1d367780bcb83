'use strict';
// What gsup allocates, and where: loaded into gsup with node's --require (not
// NODE_OPTIONS, which gsup leaves behind), e.g. under the soak:
//   PROBE_OUT=/tmp/alloc.txt SOAK_NODE_FLAGS="--require $PWD/bench/lib/alloc-probe.cjs" node bench/soak.js 90
// After PROBE_AFTER seconds (default 20: start-up and the first look done) it
// runs V8's sampling heap profiler for PROBE_FOR seconds (default 60), keeping
// the samples of objects already collected (the garbage is what it is after),
// and counts the bytes of every Buffer made meanwhile (their memory is outside
// V8's heap: the profiler does not see it), each by the gsup function that
// asked. Then it writes a report to PROBE_OUT: bytes a second, by site.
// It adds no signal handler and no ref'd timer: gsup runs as it would.
const inspector = require('node:inspector');
const { appendFileSync, writeFileSync } = require('node:fs');
const { PerformanceObserver } = require('node:perf_hooks');

const after = Number(process.env.PROBE_AFTER ?? 20) * 1000;
const duration = Number(process.env.PROBE_FOR ?? 60) * 1000;
const out = process.env.PROBE_OUT ?? `/tmp/gsup-alloc-${process.pid}.txt`;
// One sample per this many bytes allocated, on average.
const INTERVAL = 4096;

/** The first frame of gsup's own code in a stack (dist/*.cjs), as `function file:line`. */
function gsupFrame(stack) {
  for (const line of stack.split('\n').slice(2)) {
    const match = /at (?:(\S+) )?\(?(\/\S*\/dist\/[^:]+):(\d+):\d+\)?$/.exec(line.trim());
    if (match) return `${match[1] ?? '(anonymous)'} ${match[2].replace(/.*\/dist\//, 'dist/')}:${match[3]}`;
  }
  return 'elsewhere';
}

// Every Buffer's bytes are counted; one in STACK_EVERY is named by its stack (a stack costs: V8 formats it on the
// heap, which the profile would take for gsup's), and its site's figures scaled up by as much.
const STACK_EVERY = 16;
const buffers = { on: false, total: 0, calls: 0, bytes: new Map(), count: new Map() };
function countBuffers(name) {
  const original = Buffer[name];
  Buffer[name] = function counted(size, ...rest) {
    if (buffers.on && typeof size === 'number') {
      buffers.total += size;
      if (++buffers.calls % STACK_EVERY === 0) {
        const site = `${name} ${gsupFrame(new Error().stack)}`;
        buffers.bytes.set(site, (buffers.bytes.get(site) ?? 0) + size * STACK_EVERY);
        buffers.count.set(site, (buffers.count.get(site) ?? 0) + STACK_EVERY);
      }
    }
    return original.call(this, size, ...rest);
  };
}
for (const name of ['alloc', 'allocUnsafe', 'allocUnsafeSlow']) countBuffers(name);

const gcs = { on: false, count: {}, ms: 0 };
const KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
new PerformanceObserver((list) => {
  if (!gcs.on) return;
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind ?? entry.kind] ?? 'other';
    gcs.count[kind] = (gcs.count[kind] ?? 0) + 1;
    gcs.ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

// PROBE_SPACES=1: every 500 ms, what each of V8's spaces has committed, and the memory outside them (to set beside
// the soak's RssAnon: SOAK_SAMPLES), in PROBE_OUT.spaces.
if (process.env.PROBE_SPACES) {
  const v8 = require('node:v8');
  const kib = (bytes) => Math.round(bytes / 1024);
  const status = () => {
    const text = require('node:fs').readFileSync('/proc/self/status', 'latin1');
    return Number(/RssAnon:\s+(\d+)/.exec(text)?.[1] ?? NaN);
  };
  const started = Date.now();
  setInterval(() => {
    const spaces = v8.getHeapSpaceStatistics().map((space) => `${space.space_name}=${kib(space.physical_space_size)}`);
    const usage = process.memoryUsage();
    appendFileSync(
      `${out}.spaces`,
      `${((Date.now() - started) / 1000).toFixed(1)} anon=${status()} ${spaces.join(' ')} ` +
        `external=${kib(usage.external)} arrayBuffers=${kib(usage.arrayBuffers)} used=${kib(usage.heapUsed)}\n`,
    );
  }, 500).unref();
}

const session = new inspector.Session();
session.connect();
const post = (method, params = {}) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );

/** Sampled bytes by the innermost frame of gsup's own code (else the leaf's function), and by leaf function. */
function bySite(profile) {
  const gsup = new Map();
  const leaf = new Map();
  let probe = 0;
  const walk = (node, path, mine) => {
    const frame = node.callFrame;
    const here = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*\/dist\//, 'dist/')}:${frame.lineNumber + 1}`;
    const own = frame.url.includes('/dist/') ? here : path;
    // What this probe allocates itself (the stacks it takes) is not gsup's.
    const probes = mine || frame.url.endsWith('alloc-probe.cjs');
    if (probes) probe += node.selfSize;
    else if (node.selfSize > 0) {
      const site = own ?? `(not gsup's) ${here}`;
      gsup.set(site, (gsup.get(site) ?? 0) + node.selfSize);
      leaf.set(here, (leaf.get(here) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, own, probes);
  };
  walk(profile.head, undefined, false);
  return { gsup, leaf, probe };
}

const top = (map, seconds, count = 25) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([site, bytes]) => `  ${(bytes / seconds / 1024).toFixed(1).padStart(9)} KiB/s  ${site}`);

setTimeout(async () => {
  const heapBefore = process.memoryUsage();
  await post('HeapProfiler.startSampling', {
    samplingInterval: INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    // PROBE_OLD=1: only what outlived the young generation (promoted, or born old): the old generation's garbage.
    includeObjectsCollectedByMinorGC: !process.env.PROBE_OLD,
  });
  buffers.on = true;
  gcs.on = true;
  const started = process.hrtime.bigint();
  setTimeout(async () => {
    const { profile } = await post('HeapProfiler.stopSampling');
    buffers.on = false;
    gcs.on = false;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { gsup, leaf, probe } = bySite(profile);
    const sampled = [...leaf.values()].reduce((sum, bytes) => sum + bytes, 0);
    const bufferBytes = buffers.total;
    const heapAfter = process.memoryUsage();
    const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    const report = [
      `gsup pid ${process.pid}: ${seconds.toFixed(1)} s sampled (after ${after / 1000} s)`,
      `V8 heap${process.env.PROBE_OLD ? ', what outlived the young generation' : ''}: ` +
        `${(sampled / seconds / 1024).toFixed(1)} KiB/s allocated (sampled, 1 per ${INTERVAL} B; ` +
        `the probe's own ${(probe / seconds / 1024).toFixed(1)} KiB/s left out)`,
      `Buffers: ${(bufferBytes / seconds / 1024).toFixed(1)} KiB/s made (outside V8's heap)`,
      `GCs: ${JSON.stringify(gcs.count)}, ${gcs.ms.toFixed(0)} ms in all`,
      `heapUsed ${mib(heapBefore.heapUsed)} → ${mib(heapAfter.heapUsed)}, ` +
        `heapTotal ${mib(heapBefore.heapTotal)} → ${mib(heapAfter.heapTotal)}, ` +
        `external ${mib(heapBefore.external)} → ${mib(heapAfter.external)}, rss ${mib(heapAfter.rss)}`,
      '',
      "V8 heap, by gsup's innermost function on the stack:",
      ...top(gsup, seconds),
      '',
      'V8 heap, by the function that allocated:',
      ...top(leaf, seconds),
      '',
      `Buffers, by the gsup function that asked (how many a second; 1 in ${STACK_EVERY} named, scaled up):`,
      ...top(buffers.bytes, seconds).map((line) => {
        const site = line.slice(line.indexOf('KiB/s') + 7);
        return `${line} (${(buffers.count.get(site) / seconds).toFixed(1)})`;
      }),
    ];
    writeFileSync(out, `${report.join('\n')}\n`);
    // The profile itself (Chrome's DevTools open it: Memory, Load profile).
    writeFileSync(`${out}.heapprofile`, JSON.stringify(profile));
    session.disconnect();
  }, duration).unref();
}, after).unref();
