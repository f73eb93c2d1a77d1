// Summarise one .cpuprofile (node --cpu-prof, e.g. through MRTR_BENCH_SERVER_NODE_ARGS): self and inclusive time by
// room (mrtr's src folders, node's internals, dependencies) and by function, busy samples only.
// Usage: node bench/cpuprofile-summary.mjs FILE [--top N] [--incl-top N] [--no-incl] [--by-file]
//   [--skip-ms MS] [--window-ms MS]     only samples in this window of the profile
//   [--from-first NAME --plus-ms MS]    the window starts MS after the first sample under a frame named NAME (or in a
//                                       file whose URL holds it), e.g. --from-first tools-call.js --plus-ms 1500 to
//                                       leave out start-up and the first calls' compilation
//   [--callers-of NAME]                 for samples under a frame named NAME, the nearest mrtr frames that led there
//   [--timeline]                        busy milliseconds per second of the profile
// On a busy machine the profiler samples wall time: a function that was descheduled is charged, so read small
// native frames (performance.now, hashing) with care.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args[0];
const opt = (n, d) => {
  const i = args.indexOf(n);
  return i > 0 ? Number(args[i + 1]) : d;
};
const TOP = opt('--top', 25);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
/** A frame's file, shortened: mrtr's own build as `mrtr:<folder>/<file>`, dependencies from their package folder. */
const short = (url) => {
  const path = url.replace(/^file:\/\//, '');
  if (path.includes('/node_modules/')) return path.replace(/.*\/node_modules\//, 'node_modules/');
  return path.replace(/.*\/\.?dist(-[^/]+)?\//, 'mrtr:');
};
const byFile = process.argv.includes('--by-file');
const room = (n) => {
  const u = n.callFrame.url;
  const f = n.callFrame.functionName;
  if (f === '(garbage collector)') return 'gc';
  if (f === '(program)') return 'program (native/unknown)';
  if (f === '(idle)') return 'idle';
  if (!u) return `native ${f || '(anon)'}`.startsWith('native JSON') ? 'JSON native' : 'native other';
  if (u.startsWith('node:')) {
    if (/http|_http|net|stream|internal\/streams|child_process|pipe|tcp|buffer|string_decoder/.test(u))
      return 'node io (http/net/streams)';
    if (/timers|async_hooks|abort|event|process\/task|promise/.test(u)) return 'node timers/events/async';
    return 'node other';
  }
  const s = short(u);
  const ours = /^mrtr:([a-z-]+)\/([a-z-]+)/.exec(s);
  if (ours) {
    if (byFile) return s.replace(/\.js$/, '');
    // The two sub-folders worth their own line: the round chain and the gateway's policy.
    const sub = `${ours[1]}/${ours[2]}`;
    return sub === 'server/round' || sub === 'gateway/policy' ? `mrtr ${sub}` : `mrtr ${ours[1]}`;
  }
  const dep = /^node_modules\/((@[^/]+\/)?[^/]+)/.exec(s);
  if (dep) return `dep ${dep[1]}`;
  return s;
};
// time per sample
const samples = p.samples,
  deltas = p.timeDeltas;
const t = [];
let acc = 0;
for (let i = 0; i < samples.length; i++) {
  acc += deltas[i];
  t.push(acc);
}
let skip = opt('--skip-ms', 0) * 1000;
const fromFirst = args.includes('--from-first') ? args[args.indexOf('--from-first') + 1] : undefined;
if (fromFirst) {
  const hit = new Map();
  const has = (id) => {
    if (hit.has(id)) return hit.get(id);
    const n = byId.get(id);
    const v =
      (n.callFrame.url + ' ' + n.callFrame.functionName).includes(fromFirst) ||
      (parent.has(id) && has(parent.get(id)));
    hit.set(id, v);
    return v;
  };
  const i = samples.findIndex((s) => has(s));
  skip = (i >= 0 ? t[i] : 0) + opt('--plus-ms', 0) * 1000;
  console.log(
    `# window from ${(skip / 1e6).toFixed(2)} s (first '${fromFirst}' + ${opt('--plus-ms', 0)} ms)`,
  );
}
const win = opt('--window-ms', Infinity) * 1000;
const self = new Map(),
  incl = new Map(),
  rooms = new Map(),
  roomIncl = new Map();
let total = 0,
  idle = 0;
const key = (n) =>
  `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url ? short(n.callFrame.url) + ':' + (n.callFrame.lineNumber + 1) : ''}`;
for (let i = 0; i < samples.length; i++) {
  if (t[i] < skip || t[i] > skip + win) continue;
  const dt = deltas[i + 1] ?? deltas[i];
  const n = byId.get(samples[i]);
  if (n.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  total += dt;
  self.set(key(n), (self.get(key(n)) ?? 0) + dt);
  rooms.set(room(n), (rooms.get(room(n)) ?? 0) + dt);
  const seen = new Set(),
    seenR = new Set();
  for (let id = n.id; id !== undefined; id = parent.get(id)) {
    const m = byId.get(id);
    const k = key(m);
    const r = room(m);
    if (!seen.has(k)) {
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
    if (m.callFrame.functionName !== '(root)' && !seenR.has(r)) {
      seenR.add(r);
      roomIncl.set(r, (roomIncl.get(r) ?? 0) + dt);
    }
  }
}
const pct = (v) => ((100 * v) / total).toFixed(1).padStart(5) + ' %';
const show = (title, m, n = TOP) => {
  console.log(`\n## ${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${pct(v)}  ${k}`);
};
console.log(`# ${file}: busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`);
show('self time by room', rooms, 30);
show('inclusive time by room (a sample counts once per room on its stack)', roomIncl, 30);
show('self time by function', self);
if (!args.includes('--no-incl')) show('inclusive time by function', incl, opt('--incl-top', 60));
if (args.includes('--timeline')) {
  const buckets = new Map();
  for (let i = 0; i < samples.length; i++) {
    const n = byId.get(samples[i]);
    if (n.callFrame.functionName === '(idle)') continue;
    const b = Math.floor(t[i] / 1e6);
    buckets.set(b, (buckets.get(b) ?? 0) + (deltas[i + 1] ?? deltas[i]));
  }
  console.log('\n## busy ms per second of the profile');
  console.log([...buckets].map(([b, v]) => `${b}s:${Math.round(v / 1000)}`).join(' '));
}
// --callers-of NAME: for samples under a frame named NAME, the nearest mrtr frame above it (who asks for it).
if (args.includes('--callers-of')) {
  const want = args[args.indexOf('--callers-of') + 1];
  const who = new Map();
  let all = 0;
  for (let i = 0; i < samples.length; i++) {
    if (t[i] < skip || t[i] > skip + win) continue;
    const dt = deltas[i + 1] ?? deltas[i];
    let id = samples[i];
    let found = false;
    for (; id !== undefined; id = parent.get(id))
      if (byId.get(id).callFrame.functionName === want) {
        found = true;
        break;
      }
    if (!found) continue;
    all += dt;
    let up = parent.get(id);
    const chain = [];
    for (; up !== undefined && chain.length < 3; up = parent.get(up)) {
      const u = byId.get(up);
      if (short(u.callFrame.url).startsWith('mrtr:')) chain.push(key(u));
    }
    const k = chain.join(' < ');
    who.set(k, (who.get(k) ?? 0) + dt);
  }
  console.log(`\n## callers of ${want}: ${pct(all)} in all`);
  for (const [k, v] of [...who].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${pct(v)}  ${k}`);
}

// --attribute: each busy sample charged to the nearest mrtr frame's part of the work (node's internals and
// dependencies to the mrtr code that called them); samples with no mrtr frame by node's own file.
const PARTS = [
  [/^mrtr:gateway\/(policy\/|policy-link|rate-limit)/, 'policy'],
  [
    /^mrtr:(state|audit)\/|^mrtr:server\/round\/(trace|audit-links|notify|round-span|decision-link)/,
    'sealing, journal, audit',
  ],
  [/^mrtr:protocol\/(schema|official-schema)/, 'schema validation'],
  [/^mrtr:(client)\//, 'client to upstream'],
  [/^mrtr:gateway\/(upstream|idle-sessions|forward-call|idempotency)/, 'client to upstream'],
  [/^mrtr:held\//, 'client to upstream'],
  [/^mrtr:(guard)\/|^mrtr:server\/round\/guard/, 'guards (replay, refusal limit)'],
  [/^mrtr:(server|auth|protocol|flow|console|controls|stores|metrics)\//, 'HTTP edge, parsing, round chain'],
  [/^mrtr:gateway\//, 'gateway (catalog, paths, names)'],
];
if (args.includes('--attribute')) {
  const parts = new Map();
  let all = 0;
  for (let i = 0; i < samples.length; i++) {
    if (t[i] < skip || t[i] > skip + win) continue;
    const n = byId.get(samples[i]);
    if (n.callFrame.functionName === '(idle)') continue;
    const dt = deltas[i + 1] ?? deltas[i];
    all += dt;
    let part;
    if (/^validate\d+$/.test(n.callFrame.functionName)) part = 'schema validation';
    for (let id = samples[i]; !part && id !== undefined; id = parent.get(id)) {
      const f = short(byId.get(id).callFrame.url);
      // protocol's helpers (errors, JSON, bodies) serve every room: charged to the room that called them.
      if (!f.startsWith('mrtr:') || /^mrtr:protocol\/(?!schema|official-schema)/.test(f)) continue;
      part = PARTS.find(([re]) => re.test(f))?.[1] ?? `other ${f}`;
    }
    if (!part) {
      const u = n.callFrame.url;
      const fn = n.callFrame.functionName;
      if (fn === '(garbage collector)') part = 'node: GC';
      else if (/_http_client|child_process/.test(u)) part = 'client to upstream';
      else if (/_http_server|_http_incoming/.test(u)) part = 'HTTP edge, parsing, round chain';
      else part = 'node: event loop, streams, microtasks';
    }
    parts.set(part, (parts.get(part) ?? 0) + dt);
  }
  console.log(
    '\n## busy time by part of the work (node internals charged to the mrtr code that called them)',
  );
  for (const [k, v] of [...parts].sort((a, b) => b[1] - a[1]))
    console.log(`${((100 * v) / all).toFixed(1).padStart(5)} %  ${k}`);
}
