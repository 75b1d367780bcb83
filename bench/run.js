#!/usr/bin/env node
// gsup's benchmark: start-up, forwarding latency, idle CPU and memory, stop
// at scale, signal floods, reaping as PID 1, drain, restarts under load and soak, side by side
// with a naive Node forwarder (fixtures/naive-forwarder.js: spawn detached,
// forward every signal to the group, nothing else — the floor of what Node
// allows) and with tini and dumb-init where they are installed (`apt-get
// install tini dumb-init`). One file per figure (bench/*.js), the budgets in
// bench/budgets.js. Prints one table, each figure against its budget.
//   npm run bench                     everything (10,000-process stop included)
//   npm run bench -- --quick          fewer runs, shorter soaks, no 10,000-process stop
//   npm run bench -- --only latency,stops
//   npm run bench -- --write-docs     everything, then the tables of docs/performance.md rewritten,
//                                     and the figures README.md and docs/ quote from them (bench/quotes.js)
//   npm run bench -- --only restarts --write-docs
//                                     those figures' rows and tables rewritten alone (the line under the
//                                     table says which figures were measured when), then the quotes
//   node bench/soak.js 600 [--daemons] the memory soak alone, for 10 minutes (half the orphans daemons)
//   node bench/drain.js               the drain figure alone
//   node bench/restarts.js            the restarts figure alone (crash-restarts and reloads under load)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import drain from './drain.js';
import floods from './floods.js';
import idle from './idle.js';
import latency from './latency.js';
import { descendants } from './lib/proc.js';
import { ROOT, has, unshareWorks } from './lib/spawn.js';
import { cells, machine, markers, mergeRows, renderTable, writeBetween } from './lib/table.js';
import { QUOTED_FILES, lastRun, quotesIn, rewriteQuotes } from './quotes.js';
import reaping from './reaping.js';
import restarts from './restarts.js';
import soak from './soak.js';
import startup from './startup.js';
import stops from './stops.js';

// In the order they run.
const FIGURES = { startup, latency, idle, stops, floods, reaping, drain, restarts, soak };
// The tables written to the docs besides the main one, each between its markers.
const TABLES = ['drain', 'restarts'];
const DOCS = `${ROOT}docs/performance.md`;

function parse(args) {
  const options = { quick: false, only: Object.keys(FIGURES), writeDocs: false };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--write-docs') options.writeDocs = true;
    else if (arg === '--only') {
      options.only = (args[++index] ?? '').split(',').filter(Boolean);
      if (options.only.length === 0) throw new Error('--only takes figures: --only NAME[,NAME]');
    } else throw new Error(`unknown argument ${arg} (--quick, --only NAME[,NAME], --write-docs)`);
  }
  for (const name of options.only)
    if (!FIGURES[name]) throw new Error(`unknown figure ${name}: ${Object.keys(FIGURES).join(', ')}`);
  if (options.writeDocs && options.quick) throw new Error('--write-docs takes full figures: no --quick');
  return options;
}

const commandOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
  } catch {
    return '?';
  }
};

/** Kills what a figure left below this process (a bug of the bench), saying so. */
function killLeftovers() {
  const left = descendants(process.pid);
  const names = left.map((proc) => `${proc.pid} ${commandOf(proc.pid)}`);
  for (const proc of left) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  if (left.length > 0) process.stderr.write(`bench: killed what a figure left behind: ${names.join(', ')}\n`);
}

let options;
try {
  options = parse(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(2);
}
// Before the run, not after it: the markers the run will write between.
if (options.writeDocs) {
  for (const name of ['table', ...TABLES]) markers(readFileSync(DOCS, 'utf8'), name);
  for (const file of QUOTED_FILES) quotesIn(file, readFileSync(`${ROOT}${file}`, 'utf8'));
}
if (!existsSync(`${ROOT}dist/cli.cjs`)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const tools = { tini: has('tini'), dumbInit: has('dumb-init'), unshare: unshareWorks() };
process.stderr.write(
  `gsup bench: ${machine()}${tools.tini ? '' : ', tini absent'}${tools.dumbInit ? '' : ', dumb-init absent'}` +
    `${tools.unshare ? '' : ', unshare not permitted'}${options.quick ? ', quick' : ''}\n`,
);
process.once('SIGINT', () => {
  killLeftovers();
  process.exit(130);
});

const rows = [];
const tables = {};
const context = {
  quick: options.quick,
  tools,
  row(row) {
    rows.push(row);
    const { figure, result, anchors } = cells(row);
    process.stderr.write(`  ${figure}: ${result}${anchors ? ` (${anchors})` : ''}\n`);
  },
  /** A table of a figure's own ({ caption, lines }), printed (and its lines written to the docs) after the main one. */
  table: (name, table) => (tables[name] = table),
};
try {
  for (const name of options.only) {
    process.stderr.write(`${name}\n`);
    await FIGURES[name](context);
  }
} finally {
  killLeftovers();
}

const table = renderTable(rows);
const measured = `Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}${options.quick ? ', --quick' : ''}.`;
console.log(`\n${table.join('\n')}`);
for (const { caption, lines } of Object.values(tables)) console.log(`\n${[caption, '', ...lines].join('\n')}`);
console.log(`\n${measured}`);
const partial = options.only.length < Object.keys(FIGURES).length;
if (options.writeDocs) {
  if (!partial) writeBetween(DOCS, 'table', [...table, '', measured]);
  else {
    // The other figures' rows stay the last full run's; the line under the table says what is newer.
    const region = readFileSync(DOCS, 'utf8');
    const { from, to } = markers(region, 'table');
    const written = region.slice(from, to).trim().split('\n');
    const under = written.filter((line) => line.startsWith('Measured ')).map((line) => line.replace(/\.$/, ''));
    const note = `${options.only.join(', ')} measured again ${measured.slice('Measured '.length, -1)}, alone`;
    // A note of an earlier partial run of the same figures goes: this one's replaces it.
    const said = (under[0] ?? 'Measured ?').split('; ').filter((part) => !part.startsWith(note.split(' measured')[0]));
    writeBetween(DOCS, 'table', [...mergeRows(written, rows), '', `${[...said, note].join('; ')}.`]);
  }
  for (const name of TABLES.filter((each) => tables[each])) {
    const { caption, lines } = tables[name];
    writeBetween(DOCS, name, lines.length > 0 ? lines : [caption]);
  }
  // The figures other docs quote follow the run just written (bench/quotes.js).
  const run = lastRun(readFileSync(DOCS, 'utf8'));
  for (const file of QUOTED_FILES)
    writeFileSync(`${ROOT}${file}`, rewriteQuotes(file, readFileSync(`${ROOT}${file}`, 'utf8'), run));
  process.stderr.write(
    `bench: the tables of docs/performance.md rewritten, and the figures ${QUOTED_FILES.join(', ')} quote
`,
  );
}
