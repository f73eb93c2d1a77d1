// Closed-loop load: `concurrency` workers, each running one flow (or one
// request) after another on a shared keep-alive pool. Warm-up first, then a
// measured window; only operations that COMPLETE inside the window count.
import { performance } from 'node:perf_hooks';
import {
  CheckError,
  callHeaders,
  checkBare,
  checkEcho,
  checkRound1,
  checkRound2,
  echoBody,
  parseRpcResponse,
  round1Body,
  round2Body,
  TOOLS_CALL_HEADERS,
} from './mcp.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function newErrors() {
  return { total: 0, byKind: {}, samples: [] };
}
function recordError(errs, e) {
  const kind = e instanceof CheckError ? e.kind : 'network';
  errs.total++;
  errs.byKind[kind] = (errs.byKind[kind] ?? 0) + 1;
  if (errs.samples.length < 5)
    errs.samples.push(`${kind}: ${e.message}${e.sample ? ` — body: ${e.sample}` : ''}`);
}

export function percentile(sorted, p) {
  if (!sorted.length) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/**
 * @param {object} o
 * @param {'mrtr'|'bare'|'call'} o.kind  a two-round flow, one request to the bare responder, one echo call
 * @param {string} [o.tool]              kind 'call': the echo tool's name on this server
 * @param {(headers, body) => Promise<{status, contentType, text}>} o.post
 * @param {number} o.concurrency
 * @param {number} o.warmupMs
 * @param {number} o.measureMs
 * @param {() => boolean} o.isAlive        server child still running?
 * @param {() => void} [o.onMeasureStart]  called once when the window opens
 * @param {(worker: number, seq: number) => Promise<void>} [o.op]  one operation of its own instead of `kind`'s
 *                                        (lib/curves.mjs); it throws a CheckError when a response is wrong
 */
export async function runClosedLoop({
  kind,
  tool,
  post,
  concurrency,
  warmupMs,
  measureMs,
  isAlive,
  onMeasureStart,
  op: customOp,
}) {
  const t0 = performance.now();
  const windowStart = t0 + warmupMs;
  const windowEnd = windowStart + measureMs;
  const latencies = [];
  let measured = 0;
  let warmupOps = 0;
  const warmupErrors = newErrors();
  const errors = newErrors();
  let nextId = 1;
  let died = false;
  // A per-run tag keeps every `change` value unique across runs and attempts.
  const tag = Math.random().toString(36).slice(2, 8);

  let started = false;
  const opener = setTimeout(() => {
    started = true;
    onMeasureStart?.();
  }, warmupMs);

  async function mrtrFlow(worker, seq) {
    const change = `chg-${tag}-${worker}-${seq}`;
    const id1 = nextId++;
    const m1 = parseRpcResponse(await post(TOOLS_CALL_HEADERS, round1Body(id1, change)), id1);
    const state = checkRound1(m1);
    const id2 = nextId++;
    const m2 = parseRpcResponse(await post(TOOLS_CALL_HEADERS, round2Body(id2, change, state)), id2);
    checkRound2(m2, change);
  }

  async function bareOp(worker, seq) {
    const id = nextId++;
    // Same headers and a round-1-sized body, so the client-side cost matches.
    const m = parseRpcResponse(
      await post(TOOLS_CALL_HEADERS, round1Body(id, `chg-${tag}-${worker}-${seq}`)),
      0,
    );
    checkBare(m);
  }

  const echoHeaders = kind === 'call' ? callHeaders(tool) : undefined;
  async function echoCall(worker, seq) {
    const id = nextId++;
    const message = `m-${tag}-${worker}-${seq}`;
    checkEcho(parseRpcResponse(await post(echoHeaders, echoBody(id, tool, message)), id), message);
  }

  const op = customOp ?? (kind === 'mrtr' ? mrtrFlow : kind === 'call' ? echoCall : bareOp);

  async function worker(w) {
    let seq = 0;
    while (performance.now() < windowEnd) {
      if (!isAlive()) {
        died = true;
        return;
      }
      const s = performance.now();
      try {
        await op(w, seq++);
        const e = performance.now();
        if (e >= windowStart && e <= windowEnd) {
          measured++;
          latencies.push(e - s);
        } else if (e < windowStart) warmupOps++;
      } catch (err) {
        const e = performance.now();
        recordError(e >= windowStart ? errors : warmupErrors, err);
        await sleep(5); // do not spin on a dead or refusing server
      }
    }
  }

  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  clearTimeout(opener);
  if (!started) onMeasureStart?.();

  latencies.sort((a, b) => a - b);
  const sec = measureMs / 1000;
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    ops: measured,
    opsPerSec: measured / sec,
    warmupOps,
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      p999: percentile(latencies, 99.9),
      max: latencies.length ? latencies[latencies.length - 1] : Number.NaN,
      mean: latencies.length ? sum / latencies.length : Number.NaN,
    },
    errors,
    warmupErrors,
    serverDied: died,
  };
}
