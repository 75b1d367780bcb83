// The budgets, as data: one entry per row of the table, in the table's order.
// `figure` names the row ({name} is filled in by the run: a count that
// --quick changes, a figure's own count); `checks` are the budget, each with
// its words for the budget column and how the measured values are compared.
// docs/performance.md's table comes from here (npm run bench -- --write-docs),
// and test/unit/bench-docs.test.ts holds its budget column to it.

/** `measured[of]` ≤ `limit`; `words` names the budget, `{}` standing for the limit. */
const atMost = (of, limit, words) => ({ words: words.replace('{}', String(limit)), pass: (m) => m[of] <= limit });
const atLeast = (of, limit, words) => ({ words: words.replace('{}', String(limit)), pass: (m) => m[of] >= limit });
/** SPEC: gsup gone ≤ 1 s (the kill timeout) + `factor`× the kernel's own time to kill that tree, same run. */
const kernelFloor = (factor) => ({
  words: `≤ 1 s + ${factor}× the kernel's`,
  pass: (m) => m.tookMs <= 1000 + factor * m.kernelMs,
});
const stopAtScale = (count) => `stop of ${count.toLocaleString('en')} processes ignoring SIGTERM, -t 1s`;

export const BUDGETS = [
  {
    id: 'startup',
    figure: 'start-up, `gsup -- true` (median of {runs})',
    checks: [atMost('ratio', 1.3, '≤ {}× node -e 0')],
  },
  {
    id: 'startup-preload',
    figure: 'start-up with a preload in NODE_OPTIONS (gsup starts again without it)',
    checks: [],
  },
  {
    // What gsup adds to a Node command (the time less the command's own node -e 0), with a held socket.
    id: 'startup-listen',
    figure: 'start-up with `--listen`: `gsup --listen PORT -- node -e 0` less `node -e 0` (median of {runs})',
    checks: [atMost('ratio', 1.3, '≤ {}× node -e 0')],
  },
  {
    id: 'latency',
    figure: 'forwarding latency, median / p99 ({signals} SIGWINCH to a grandchild behind sh -c)',
    checks: [atMost('ratio', 1.25, 'median ≤ {}× naive'), atMost('p99Ms', 1.5, 'p99 ≤ {} ms')],
  },
  {
    id: 'latency-scraped',
    figure: 'forwarding latency with --status-port, /metrics scraped every 100 ms ({scrapes} scrapes)',
    checks: [
      atMost('ratio', 1.25, 'median ≤ {}× naive'),
      atMost('p99Ms', 1.5, 'p99 ≤ {} ms'),
      atLeast('scrapes', 1, '≥ {} scrape'),
    ],
  },
  {
    id: 'latency-listen',
    figure: 'forwarding latency with `--listen`, median / p99 ({signals} SIGWINCH, the preload in the grandchild)',
    checks: [atMost('ratio', 1.25, 'median ≤ {}× naive'), atMost('p99Ms', 1.5, 'p99 ≤ {} ms')],
  },
  {
    id: 'idle-cpu',
    figure: 'idle CPU supervising `sleep {seconds}` (after start-up)',
    checks: [atMost('cpuMs', 50, '≤ {} ms')],
  },
  {
    id: 'idle-rss',
    figure: 'idle RSS supervising `sleep` (private: RssAnon)',
    checks: [atMost('ratio', 1.3, '≤ {}× naive')],
  },
  {
    id: 'idle-rss-served',
    figure: 'idle RSS with --status-port (private: RssAnon)',
    checks: [atMost('ratio', 1.3, '≤ {}× naive')],
  },
  // The 100-process stop shows how the time scales; only its survivors are held to a budget.
  { id: 'stop-100', figure: stopAtScale(100), checks: [atMost('survivors', 0, '{} survivors (the time: scaling)')] },
  { id: 'stop-1000', figure: stopAtScale(1000), checks: [kernelFloor(1.3), atMost('survivors', 0, '{} survivors')] },
  {
    id: 'stop-peak-rss',
    figure: 'peak RSS of gsup over the 1,000-process stop',
    checks: [atMost('peakMiB', 80, '≤ {} MiB')],
  },
  {
    id: 'scan',
    figure: 'one look at a tree of 1,000 processes (/proc scan)',
    checks: [
      atMost('rawRatio', 1.5, '≤ {}× the raw /proc read'),
      { words: '< a ps spawn', pass: (m) => m.scanMs < m.psMs },
    ],
  },
  { id: 'stop-10000', figure: stopAtScale(10000), checks: [kernelFloor(1.3), atMost('survivors', 0, '{} survivors')] },
  {
    id: 'flood-stop',
    figure: '2,000 SIGUSR1 then SIGTERM: time to stop (median of {tries})',
    checks: [{ words: '≤ 1.5× naive + 5 ms', pass: (m) => m.stopMs <= 1.5 * m.naiveMs + 5 }],
  },
  {
    id: 'flood-through',
    figure: '30,000 SIGUSR1 then SIGTERM: the SIGTERM got through',
    checks: [{ words: 'at least as often as the naive forwarder', pass: (m) => m.got >= m.naiveGot }],
  },
  { id: 'reaping', figure: 'PID 1, 10,000 short-lived orphans', checks: [atMost('most', 100, 'never > {} zombies')] },
  {
    // One row per chain (bench/drain.js); the best clean stop is the fastest other supervisor's that lost none.
    id: 'drain',
    figure: 'drain: {chain}',
    checks: [
      atMost('lost', 0, '{} lost'),
      { words: 'stop ≤ 1.5× best clean', pass: (m) => m.ratio === undefined || m.ratio <= 1.5 },
    ],
  },
  {
    // bench/restarts.js: the crashing runs had accepted what they held (the app counts it as it crashes).
    id: 'restarts-listen',
    figure: 'crash-restarts under HTTP load with `--listen` (20 clients, 2 crashes, `--restart-delay 100ms`)',
    checks: [
      atMost('refused', 0, '{} refused'),
      { words: 'reset + lost ≤ accepted at the crashes', pass: (m) => m.failed <= m.accepted },
    ],
  },
  {
    id: 'reloads',
    figure: 'reloads under HTTP load (`--reload-signal`, 3 reloads, 20 clients, 300 ms requests)',
    checks: [
      atMost('refused', 0, '{} refused'),
      atMost('reset', 0, '{} reset'),
      atMost('lost', 0, '{} lost'),
      atMost('ratio', 2, 'p99 ≤ {}× no reload'),
    ],
  },
  {
    // The app's shutdown as its guide writes it (`server.close()`): what an unchanged app loses to a reload,
    // each client kind apart (bench/restarts.js).
    id: 'reloads-guide',
    figure:
      'reloads of an app whose shutdown is `server.close()` (`--reload-signal`, 3 reloads, ' +
      '10 one-connection and 10 keep-alive clients, 300 ms requests)',
    checks: [
      atMost('refused', 0, '{} refused'),
      atMost('reset', 0, '{} reset'),
      atMost('lost', 0, '{} lost'),
      atMost('non2xx', 0, '{} non-2xx'),
      atMost('ratio', 2, 'p99 ≤ {}× no reload'),
    ],
  },
  {
    id: 'soak',
    figure: 'soak: private memory (RssAnon) as PID 1 under churn, {seconds} s',
    checks: [atMost('peakMiB', 16, 'peak ≤ {} MiB'), atMost('growthMiB', 1, 'flat (≤ +{} MiB)')],
  },
  {
    // The same churn, half the orphans daemons (sessions of their own): a look at the tree for each forwarded signal.
    id: 'soak-daemons',
    figure: 'soak with daemons (a look for each signal): private memory (RssAnon) as PID 1, {seconds} s',
    checks: [atMost('peakMiB', 16, 'peak ≤ {} MiB'), atMost('growthMiB', 1, 'flat (≤ +{} MiB)')],
  },
];

const byId = new Map(BUDGETS.map((entry) => [entry.id, entry]));
export const budget = (id) => {
  const entry = byId.get(id);
  if (!entry) throw new Error(`no budget for the row ${id} (bench/budgets.js)`);
  return entry;
};

/** The budget column of a row. */
export const budgetWords = (entry) =>
  entry.checks.length === 0 ? 'none (reported)' : entry.checks.map((check) => check.words).join(', ');

/** The figure column of a row: its name with the run's values filled in. */
export const figureWords = (entry, params = {}) =>
  entry.figure.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));

/** ok, MISSED, or - for a row without a budget or not measured. */
export function verdict(entry, measured) {
  if (!measured || entry.checks.length === 0) return '-';
  return entry.checks.every((check) => check.pass(measured)) ? 'ok' : 'MISSED';
}
