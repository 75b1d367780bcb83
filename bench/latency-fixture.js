// The grandchild of the latency benchmark: prints `ready`, then the
// CLOCK_MONOTONIC time (process.hrtime, in ns) at which each SIGWINCH arrives.
process.on('SIGWINCH', () => process.stdout.write(`${process.hrtime.bigint()}\n`));
setInterval(() => {}, 1 << 30);
process.stdout.write('ready\n');
