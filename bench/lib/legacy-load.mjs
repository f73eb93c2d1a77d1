// Closed-loop load of 2025 clients: each worker opens one session (initialize + notifications/initialized, outside
// the measured flows, as a long-lived client would) and then runs the two-round approve_change flow again and again
// over the 2025 wire: POST tools/call, read its SSE stream up to the server's elicitation/create, POST the answer
// (202), read on to the result. The same loop drives mrtr's bridge and the SDK in its stateful mode.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile } from './load.mjs';

const VERSION = '2025-11-25';

class FlowError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function post(agent, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers }, (res) => resolve(res));
    req.on('error', reject);
    req.end(body);
  });
}

async function readAll(res) {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

/** Read JSON-RPC messages off an SSE response, one `data:` event at a time. */
async function* sseMessages(res) {
  let buffer = '';
  res.setEncoding('utf8');
  for await (const chunk of res) {
    buffer += chunk;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let data = '';
      for (const line of block.split('\n')) if (line.startsWith('data:')) data += line.slice(5).trimStart();
      if (data.trim() !== '') yield JSON.parse(data);
    }
  }
}

async function openSession(agent, url) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await post(
    agent,
    url,
    headers,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: VERSION,
        capabilities: { elicitation: {} },
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  );
  const session = init.headers['mcp-session-id'];
  await readAll(init);
  if (init.statusCode !== 200 || !session)
    throw new FlowError('handshake', `initialize: HTTP ${init.statusCode}`);
  const h = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': VERSION };
  await readAll(await post(agent, url, h, '{"jsonrpc":"2.0","method":"notifications/initialized"}'));
  return h;
}

async function flow(agent, url, headers, id, change) {
  const res = await post(
    agent,
    url,
    headers,
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'approve_change', arguments: { change } },
    }),
  );
  if (res.statusCode !== 200)
    throw new FlowError('status', `tools/call: HTTP ${res.statusCode}: ${await readAll(res)}`);
  let done = false;
  // Read to the end of the stream (the server ends it after the result), so the socket goes back to the pool.
  for await (const m of sseMessages(res)) {
    if (m.method === 'elicitation/create') {
      const answer = await post(
        agent,
        url,
        headers,
        JSON.stringify({
          jsonrpc: '2.0',
          id: m.id,
          result: { action: 'accept', content: { approve: true } },
        }),
      );
      await readAll(answer);
      if (answer.statusCode !== 202) throw new FlowError('answer', `answer: HTTP ${answer.statusCode}`);
    } else if (m.id === id) {
      const text = m.result?.content?.[0]?.text;
      if (text !== `approved ${change}`)
        throw new FlowError('result', `unexpected result ${JSON.stringify(m).slice(0, 200)}`);
      done = true;
    }
  }
  if (!done) throw new FlowError('stream', 'the stream ended without the result');
}

export async function runLegacyLoop({ url, concurrency, warmupMs, measureMs, isAlive, onMeasureStart }) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency * 2 });
  const t0 = performance.now();
  const windowStart = t0 + warmupMs;
  const windowEnd = windowStart + measureMs;
  const latencies = [];
  let measured = 0;
  const newErrors = () => ({ total: 0, byKind: {}, samples: [] });
  const errors = newErrors();
  const warmupErrors = newErrors();
  const record = (errs, e) => {
    const kind = e.kind ?? 'network';
    errs.total++;
    errs.byKind[kind] = (errs.byKind[kind] ?? 0) + 1;
    if (errs.samples.length < 5) errs.samples.push(`${kind}: ${e.message}`);
  };
  let died = false;
  let started = false;
  const opener = setTimeout(() => {
    started = true;
    onMeasureStart?.();
  }, warmupMs);
  const tag = Math.random().toString(36).slice(2, 8);
  let nextId = 1;

  async function worker(w) {
    let headers;
    let seq = 0;
    while (performance.now() < windowEnd) {
      if (!isAlive()) {
        died = true;
        return;
      }
      try {
        headers ??= await openSession(agent, url);
        const t = performance.now();
        await flow(agent, url, headers, nextId++, `chg-${tag}-${w}-${seq++}`);
        const e = performance.now();
        if (e >= windowStart && e <= windowEnd) {
          measured++;
          latencies.push(e - t);
        }
      } catch (err) {
        record(performance.now() >= windowStart ? errors : warmupErrors, err);
        headers = undefined;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  }

  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  clearTimeout(opener);
  if (!started) onMeasureStart?.();
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    ops: measured,
    opsPerSec: measured / (measureMs / 1000),
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
