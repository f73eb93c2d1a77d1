// The arrows between rooms (docs/architecture.md), as data, and the check that reads every import in src/ against
// them. A room may import only the rooms its row names, and only through their index.ts (public) or internal.ts (lent
// to other rooms, never a package entry point). Inside the server room, the
// same for its parts (SERVER_ARROWS).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');

/** Which rooms each room may import. `.` is src/index.ts, the package's root entry point. */
export const ARROWS: Readonly<Record<string, readonly string[]>> = {
  protocol: [],
  // state, files and stores import protocol for one thing: MrtrError, the base of every error mrtr throws.
  state: ['protocol'],
  files: ['protocol'],
  held: ['protocol'],
  stores: ['protocol', 'files'],
  // auth → state: sign-in cookies are signed by state's one HMAC signer (signing.ts).
  auth: ['protocol', 'state'],
  flow: ['protocol', 'state'],
  guard: ['protocol', 'state', 'stores'],
  audit: ['protocol', 'state', 'files'],
  controls: ['protocol', 'state', 'stores', 'auth', 'flow'],
  server: ['protocol', 'state', 'flow', 'stores', 'guard', 'auth', 'held'],
  // "Connect your account": a server is an OAuth client (client's OAuth kit) of a third party; its connect pages sign
  // people in (auth), hold and wake rounds as the controls do, and keep tokens in a store, sealed with state's keys.
  connections: ['protocol', 'state', 'stores', 'auth', 'flow', 'controls', 'client'],
  // The console shows what the controls and the audit trail hold, to people signed in with auth's pages.
  console: ['protocol', 'auth', 'audit', 'controls'],
  // Webhooks for approvers: they read the controls' events; a receiver's check remembers deliveries in a store; the
  // signature is state's one HMAC signer.
  notify: ['protocol', 'state', 'controls', 'stores'],
  client: ['protocol', 'held'],
  // Prometheus metrics read rounds structurally (as the audit trail does): no server import.
  metrics: ['protocol'],
  // The gateway stands on every room a server author uses, and on the client to reach its upstreams.
  gateway: [
    'protocol',
    'state',
    'files',
    'flow',
    'stores',
    'guard',
    'auth',
    'audit',
    'controls',
    'server',
    'client',
    'held',
    'console',
    'connections',
  ],
  cli: [
    'gateway',
    'connections',
    'metrics',
    'console',
    'notify',
    'protocol',
    'state',
    'files',
    'flow',
    'stores',
    'guard',
    'auth',
    'audit',
    'controls',
    'server',
    'client',
  ],
  // The root also names every room's error classes, types only, in AnyMrtrError (src/errors.ts).
  '.': [
    'protocol',
    'state',
    'flow',
    'stores',
    'guard',
    'auth',
    'server',
    'client',
    'audit',
    'controls',
    'connections',
    'console',
    'notify',
    'gateway',
    'metrics',
    'cli',
  ],
};

/**
 * The server room's parts. Its sub-folders are parts of their own (`round/`, `methods/`, `legacy/`); its top-level
 * files are grouped by job here, every one of them, so a new file is placed on purpose.
 */
export const SERVER_FILES: Readonly<Record<string, readonly string[]>> = {
  // What every part speaks: a request's context and environment, errors, defaults, the RequestHandler interface.
  vocabulary: [
    'context.ts',
    'defaults.ts',
    'environment.ts',
    'errors.ts',
    'header-params.ts',
    'maybe-async.ts',
    'message.ts',
    'option-checks.ts',
    'request-handler.ts',
    'time-bound.ts',
  ],
  // What the dispatcher, the methods and the round read: the catalogue, the state seam, the front door's checks.
  core: [
    'content.ts',
    'deadline.ts',
    'handlers.ts',
    'input-bounds.ts',
    'pagination.ts',
    'registry.ts',
    'request-meta.ts',
    'request-state.ts',
    'result-shape.ts',
    'schema-input.ts',
    'uri-template.ts',
  ],
  // How one request is read and answered on the wire, shared by the transports and the 2025 bridge's HTTP front.
  framing: ['http-exchange.ts', 'http-guards.ts', 'http-wire.ts'],
  transports: ['http.ts', 'stdio.ts', 'transport-refusal.ts'],
  // What puts the parts together: the dispatcher, McpServer with its requiredScopes guard, the entry point.
  assembly: [
    'dispatch.ts',
    'http-edge.ts',
    'index.ts',
    'internal.ts',
    'mcp-http.ts',
    'scope-guard.ts',
    'server-options.ts',
    'server.ts',
  ],
};

/**
 * Which parts of the server room each part may import, besides its own files. The round knows no method, bridge
 * or transport; the methods use the round; the bridge and the transports reach the core only through the
 * RequestHandler interface (vocabulary), never the dispatcher.
 */
export const SERVER_ARROWS: Readonly<Record<string, readonly string[]>> = {
  vocabulary: [],
  core: ['vocabulary', 'catalog'],
  // The Catalog seam: what a server serves, found per caller; the registry (core) is its static implementation.
  catalog: ['vocabulary', 'core'],
  framing: ['vocabulary'],
  round: ['vocabulary', 'core'],
  methods: ['vocabulary', 'core', 'catalog', 'round', 'tasks'],
  // The tasks extension: task records, their rounds run through the dispatcher's route (handed in), never a method.
  tasks: ['vocabulary', 'core', 'round'],
  legacy: ['vocabulary', 'framing'],
  // The MCP endpoint and the routes in front of it, over any wire: node's listener and mcpHttp adapt them.
  http: ['vocabulary', 'core', 'framing', 'round', 'legacy', 'transports'],
  transports: ['vocabulary', 'core', 'framing', 'round', 'legacy', 'http'],
  assembly: [
    'vocabulary',
    'core',
    'catalog',
    'framing',
    'round',
    'methods',
    'legacy',
    'transports',
    'tasks',
    'http',
  ],
};

/**
 * Imports that break SERVER_ARROWS as the code stands, each with the move that ends it. The test fails once one is
 * gone, so this list only shrinks.
 */
export const SERVER_ARROWS_TO_MOVE: Readonly<Record<string, string>> = {};

export interface SourceFile {
  /** Path relative to src/, with forward slashes. */
  path: string;
  text: string;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Files outside src/ that the package ships beside dist/ and src/ may import: the official schema (protocol's). */
const SHIPPED_OUTSIDE_SRC: Readonly<Record<string, string>> = { 'schema/2026-07-28.json': 'protocol' };

const roomOf = (path: string): string => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '.');

/** Every import that breaks an arrow, as "file → specifier (why)". */
export function boundaryViolations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const from = roomOf(file.path);
    for (const match of file.text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!;
      if (!specifier.startsWith('.')) continue;
      const target = relative(SRC, resolve(SRC, dirname(file.path), specifier))
        .split('\\')
        .join('/');
      if (target.startsWith('..')) {
        if (SHIPPED_OUTSIDE_SRC[target.replace(/^\.\.\//, '')] === from) continue;
        problems.push(`${file.path} → ${specifier} (imports from outside src/)`);
        continue;
      }
      const to = roomOf(target);
      if (to === from) continue;
      const allowed = ARROWS[from];
      if (!allowed) problems.push(`${file.path} → ${specifier} (room "${from}" has no row in ARROWS)`);
      else if (!allowed.includes(to))
        problems.push(`${file.path} → ${specifier} (${from} may not import ${to})`);
      // index.ts is the room's public face (its package entry point); internal.ts what it lends to other rooms only.
      else if (target !== `${to}/index.js` && target !== `${to}/internal.js`) {
        problems.push(
          `${file.path} → ${specifier} (past ${to}'s index.ts and internal.ts: import from ${to}/index.js or ${to}/internal.js)`,
        );
      }
    }
  }
  return problems;
}

export function sourceFiles(dir = SRC): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    if (!entry.name.endsWith('.ts')) return [];
    return [{ path: relative(SRC, full).split('\\').join('/'), text: readFileSync(full, 'utf8') }];
  });
}

/** The part of the server room a path under src/server/ belongs to, or undefined for a top-level file with none. */
export function serverPartOf(pathInServer: string): string | undefined {
  if (pathInServer.includes('/')) return pathInServer.slice(0, pathInServer.indexOf('/'));
  return Object.keys(SERVER_FILES).find((part) => SERVER_FILES[part]!.includes(pathInServer));
}

/** Every import inside src/server/ that breaks SERVER_ARROWS, as "file → specifier (why)". */
export function serverPartViolations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    if (!file.path.startsWith('server/')) continue;
    const from = serverPartOf(file.path.slice('server/'.length));
    const allowed = from === undefined ? undefined : SERVER_ARROWS[from];
    if (!allowed) {
      problems.push(`${file.path} (no part in SERVER_FILES or no row in SERVER_ARROWS)`);
      continue;
    }
    for (const match of file.text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!;
      if (!specifier.startsWith('.')) continue;
      const target = relative(join(SRC, 'server'), resolve(SRC, dirname(file.path), specifier))
        .split('\\')
        .join('/');
      if (target.startsWith('..')) continue; // another room: ARROWS decides
      const to = serverPartOf(target.replace(/\.js$/, '.ts'));
      if (to !== from && !allowed.includes(to ?? '(none)'))
        problems.push(`${file.path} → ${specifier} (in server/, ${from} may not import ${to ?? target})`);
    }
  }
  return problems;
}

/** The files each file in src/ imports (relative imports only, type-only ones too: a circle of types is one as well). */
function importGraph(files: readonly SourceFile[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const match of file.text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!;
      if (!specifier.startsWith('.')) continue;
      const target = relative(SRC, resolve(SRC, dirname(file.path), specifier))
        .split('\\')
        .join('/');
      targets.push(target.replace(/\.js$/, '.ts'));
    }
    graph.set(file.path, targets);
  }
  return graph;
}

/**
 * Every import circle in src/, each as "a.ts → b.ts → a.ts" (one line per strongly connected group of files, starting
 * at its first file by name). A circle means two files share a piece that belongs in a file of its own.
 */
export function importCircles(files: readonly SourceFile[]): string[] {
  const graph = importGraph(files);
  // Tarjan's strongly connected components, iterative-enough for src/'s depth.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    const selfImport = (graph.get(v) ?? []).includes(v);
    if (group.length > 1 || selfImport) groups.push(group.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return groups.map((group) => circleThrough(group, graph).join(' → ')).sort();
}

/** One circle through a group's first file, by the shortest way back to it, as the list of files walked. */
function circleThrough(group: readonly string[], graph: Map<string, string[]>): string[] {
  const start = group[0]!;
  const inGroup = new Set(group);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!inGroup.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at: string | undefined = v; at !== undefined && at !== start; at = cameFrom.get(at))
          path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
