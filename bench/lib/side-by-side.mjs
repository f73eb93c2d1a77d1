// `--tracing --together`: tracing off, on, and off again (a control) served at the same time on the same CPU, each
// under its own closed loop of half the concurrency, measured over the same window. A shared, busy machine then slows
// all three alike, so the ratio of their CPU per flow holds where back-to-back rows swing by half. The second "off"
// shows the method's own error (its ratio to the first should be near 1).
import { runClosedLoop } from './load.mjs';
import { readCpuTicks, USER_HZ } from './proc.mjs';
import { createRawClient } from './raw-client.mjs';
import { startServer } from './servers.mjs';

const ROWS = [
  ['off', 'ours'],
  ['on', 'ours-tracing'],
  ['off again', 'ours'],
];

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor((list.length - 1) / 2)];
const spread = (list) => {
  const s = [...list].sort((a, b) => a - b);
  return `median ${median(s).toFixed(2)}×, from ${s[0].toFixed(2)}× to ${s.at(-1).toFixed(2)}×`;
};

/** Runs `passes` windows; prints each pass's CPU per flow and the ratios, then their medians and spread. */
export async function runTogether(opts, passes) {
  const concurrency = Math.max(1, Math.floor(opts.concurrency / 2));
  const perFlow = ROWS.map(() => []);
  console.log(
    `\n=== tracing off, on and off again, served at once (${passes} passes of ${opts.seconds} s, concurrency ${concurrency} each)`,
  );
  for (let pass = 1; pass <= passes; pass++) {
    const servers = [];
    try {
      for (const [, name] of ROWS) servers.push(await startServer(name, { verbose: opts.verbose }));
      const runs = await Promise.all(
        servers.map(async (server) => {
          const client = createRawClient(server.url, concurrency);
          let before = 0;
          try {
            const load = await runClosedLoop({
              kind: 'mrtr',
              post: client.post,
              concurrency,
              warmupMs: opts.warmup * 1000,
              measureMs: opts.seconds * 1000,
              isAlive: server.isAlive,
              onMeasureStart: () => {
                before = readCpuTicks(server.pid);
              },
            });
            const errors = load.errors.total + load.warmupErrors.total;
            if (errors > 0) throw new Error(`${errors} response error(s)`);
            return ((readCpuTicks(server.pid) - before) / USER_HZ / load.ops) * 1e6;
          } finally {
            client.close();
          }
        }),
      );
      for (const [i, us] of runs.entries()) perFlow[i].push(us);
      const [off, on, again] = runs;
      console.log(
        `  pass ${pass}: µs per flow off ${Math.round(off)}, on ${Math.round(on)}, off again ${Math.round(again)}` +
          ` — on ÷ off ${(on / off).toFixed(2)}×, off again ÷ off ${(again / off).toFixed(2)}×`,
      );
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  const ratio = (i) => perFlow[i].map((us, pass) => us / perFlow[0][pass]);
  const on = ratio(1);
  const { OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg } = process.env;
  const sampling = sampler ? `${sampler}${arg ? ` ${arg}` : ''}` : '100 %';
  console.log(
    `tracing on (${sampling}, OTLP) ÷ off, server CPU per flow: ${spread(on)} (goal at 100 %: ≤ 1.15×)`,
  );
  console.log(`off again ÷ off (the method's own error): ${spread(ratio(2))}`);
}
