// Every shell command line of README.md and docs/*.md runs as written. Each documented line (collected by
// documented-lines.ts) has an entry here: run in a folder that has the repository's bin/, dist/ and examples/ and
// an empty ./data, or skipped with the reason it cannot run in a test. A new line with no entry, or an entry whose
// line left the docs, fails the first test.
//
// The one change made to a line: port 3000 (and 3001, and the gateway demo's 3100) is another free port, since a
// person's `npm start` may hold 3000 on this machine — a `serve` line without --port gets one (an `npm run` line
// as `-- --port N`, which the script's command takes as its last --port), and URLs on 127.0.0.1:3000 or :3100 name
// the server the group started. Placeholders a reader fills in (<flowId>, ID, $TOKEN, $MRTR_AUDIT_VKEY) get what
// they stand for.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { definitionDigest } from '../../src/gateway/index.js';
import type { JsonObject } from '../../src/protocol/index.js';
import { requireBuiltCli } from '../client/helpers.js';
import { freePortPair } from '../helpers/free-port.js';
import { documentedLines } from './documented-lines.js';

const REPO = join(import.meta.dirname, '../..');
/** Generous: these start real servers and clients; the limit only stops a hang, it measures nothing. */
const LONG = 180_000;

const SKIPPED: Record<string, string> = {
  "./bin/mrtr call http://127.0.0.1:3100/mcp tracker__connect --token alice-dev-token --args '{}'":
    'test/cli/gateway-demo.test.ts runs it as printed in a terminal while alice connects in Chromium',
  "./bin/mrtr call http://127.0.0.1:3100/mcp tracker__list_tickets --token alice-dev-token --args '{}'":
    'test/cli/gateway-demo.test.ts runs it as printed once alice has connected (and as bob, who is asked)',
  './bin/mrtr serve --metrics 9464':
    'test/cli/serve-metrics.test.ts runs mrtr serve --metrics on a free port and reads /metrics with a Prometheus parser',
  'curl -s http://127.0.0.1:9464/metrics':
    'test/cli/serve-metrics.test.ts scrapes the metrics of the line above',
  './bin/mrtr audit export --audit sqlite:./data/audit.db --format ocsf':
    'test/audit/export.test.ts runs this on a trail it writes, and validates each event against the OCSF class',
  './bin/mrtr audit export --audit sqlite:./data/audit.db --format jsonl --follow':
    'never ends on its own: test/audit/export.test.ts runs --follow and awaits an event recorded after it started',
  './bin/mrtr call':
    "the README naming the command npm start's lines begin with; test/cli/npm-start.test.ts runs each printed line",
  'npm install && npm start':
    "npm install needs the registry and rewrites node_modules; npm start's own command runs in an empty folder in test/cli/npm-start.test.ts, and the same line with ./bin/mrtr runs here",
  'npm install && npm test': 'the whole suite, of which this test is a part',
  './bin/mrtr gateway demo --port P --data DIR':
    'a form with placeholders: npm run gateway:demo runs below on another free port, which is this line with P given',
  'npm run test:node22':
    'the whole suite again on Node 22, of which this test is a part (.ci/run runs it after npm test)',
  'npm run build':
    'npm test runs it before every run (pretest); test/build/build-swap.test.ts checks what it leaves',
  './bin/mrtr call http://127.0.0.1:3000/mcp grant_role --token alice-dev-token --args \'{"subject":"carol","role":"on-call"}\'':
    "needs a person's consent, a TOTP code typed on the step-up page and another person's approval: test/cli/npm-start.test.ts drives grant_role to the end as those people",
  './bin/mrtr audit show AaI15Poe1-QV1KJR9QFMcw':
    'a flow id of the session the README shows; `./bin/mrtr audit show <flowId>` runs here with a flow of this run',
  'mrtr audit show AaI1zqR_Drfcsitc4QYFNg':
    'a flow id of the session docs/audit.md shows; `./bin/mrtr audit show <flowId>` runs here with a flow of this run',
  'npm ci && npm run build':
    'a fresh install from the registry: .ci/run runs exactly this before the tests (npm ci builds dist/ through prepare)',
  'npm run bench -- --pin --only ours,ours-auth-dev,ours-auth-jwt,ours-guard-sqlite,ours-guard-redis,ours-audit-sqlite,ours-audit-postgres,ours-full,sdk,bare --repeat 3':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench checks the bench script',
  'npm run bench -- --gateway --repeat 3 --seconds 5 --warmup 2 --quiet-wait 0':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench/gateway-bench.test.ts checks its flags and report',
  'npm run bench -- --gateway --callers 1,32 --seconds 5 --warmup 2 --repeat 1 --quiet-wait 0':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench/gateway-bench.test.ts checks its flags and report',
  'npm run bench -- --tracing --together --repeat 5 --seconds 5 --warmup 2':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench/gateway-bench.test.ts checks its flags',
  "node bench/cpuprofile-summary.mjs /tmp/prof/<gateway's file> --from-first tools-call.js --plus-ms 1500 --attribute":
    'a form with a placeholder: reads a profile the bench line above it writes, minutes of load that measure the machine',
  'npm run bench -- --gateway --gateway-rows fs-gateway-2026,fs-gateway-2025,fs-mcp-proxy-2026,fs-mcp-proxy-2025,sdk-direct-2026,sdk-gateway-2026 --baseline <copy of the earlier build> --callers 32 --seconds 5 --warmup 2 --repeat 3 --quiet-wait 0':
    'a benchmark with a placeholder (a copy of an earlier build): minutes of load that measure the machine (CONTRIBUTING: never time things in tests)',
  'npm run bench -- --pin --curves':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench/svg-chart.test.ts checks its chart',
  'npm run build && npm run bench -- --only ours,ours-audit-sqlite --seconds 8 --warmup 2 --repeat 5 --quiet-wait 20 --retries 1':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench checks the bench script',
  'npm run build && npm run bench -- --only ours,ours-audit-sqlite --seconds 5 --warmup 2 --repeat 3 --quiet-wait 10 --retries 1':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench checks the bench script',
  'npm run build && npm run bench -- --only ours,ours-guard-sqlite,ours-guard-redis --repeat 3 --seconds 6 --warmup 2 --quiet-wait 15 --retries 1':
    'a benchmark: minutes of load that measure the machine (CONTRIBUTING: never time things in tests); test/bench checks the bench script',
  './bin/mrtr serve --fixture workflows --data ./data --port $port --resource http://127.0.0.1:3000/mcp --tokens examples/workflows/tokens.json --state-keys-file ./data/state-keys --store redis://127.0.0.1:6379/0 --audit postgres://mrtr@127.0.0.1:5432/mrtr --audit-instance "mrtr-$port" &':
    'three instances behind nginx with Redis and PostgreSQL: test/fleet starts this fleet (npm run test:fleet)',
  'PATH=.tools/node22/node_modules/.bin:$PATH npx conformance client --command "node dist/cli/main.js conformance-client" --scenario tools_call':
    "the official runner on the private Node 22: test/client/conformance.test.ts runs this scenario and the runner's others",
};

/** The lines each group below runs; together with SKIPPED, every documented line. */
const RUN = {
  demo: {
    serve:
      './bin/mrtr serve --fixture demo --port 3000 --tokens examples/workflows/tokens.json --store sqlite:./data/replay.db --audit sqlite:./data/audit.db --audit-key-file ./data/audit-key --state-keys-file ./data/state-keys',
    tools: './bin/mrtr tools http://127.0.0.1:3000/mcp --token bob-dev-token',
    callByPerson:
      './bin/mrtr call http://127.0.0.1:3000/mcp resolve_bug --args \'{"id":42}\' --token bob-dev-token',
    callScripted:
      './bin/mrtr call http://127.0.0.1:3000/mcp resolve_bug --args \'{"id":42}\' --token bob-dev-token --answers \'{"resolution":"Fixed","confirm":"yes"}\' --json',
    prompt:
      './bin/mrtr prompt http://127.0.0.1:3000/mcp triage_note --token bob-dev-token --answers \'{"severity":"high"}\'',
    read: './bin/mrtr read http://127.0.0.1:3000/mcp helpdesk://policy --token bob-dev-token',
    inspectorList:
      'npx @modelcontextprotocol/inspector --cli http://127.0.0.1:3000/mcp --header "Authorization: Bearer bob-dev-token" --method tools/list',
    inspectorEcho:
      'npx @modelcontextprotocol/inspector --cli http://127.0.0.1:3000/mcp --header "Authorization: Bearer bob-dev-token" --method tools/call --tool-name echo --tool-arg message=hi',
    inspectorRoots:
      'npx @modelcontextprotocol/inspector --cli http://127.0.0.1:3000/mcp --header "Authorization: Bearer bob-dev-token" --method tools/call --tool-name check_workspace',
    flowsSince: './bin/mrtr audit flows --since 1h',
    flows: 'mrtr audit flows',
    flowsRefused: 'mrtr audit flows --outcome refused --json',
    show: './bin/mrtr audit show <flowId>',
    verify: './bin/mrtr audit verify --vkey "$MRTR_AUDIT_VKEY"',
    verifyInstalled: 'mrtr audit verify --vkey "$MRTR_AUDIT_VKEY"',
    checkpoint: 'mrtr audit checkpoint --out q4.notes',
    bundle: './bin/mrtr audit bundle --out trail.json',
    verifyBundle: './bin/mrtr audit verify --bundle trail.json --vkey "$MRTR_AUDIT_VKEY"',
    flowsOfTool: './bin/mrtr audit flows --target check_workspace',
  },
  offline: {
    keys: './bin/mrtr keys generate',
    keysInstalled: 'mrtr keys generate',
    totp: './bin/mrtr users totp alice',
    totpFile: './bin/mrtr users totp alice --totp ./data/totp.json',
    totpData: './bin/mrtr users totp alice --totp data/totp.json',
    stdioServer: './bin/mrtr serve --fixture example --stdio',
    stdioByPerson:
      './bin/mrtr call --stdio resolve_bug --args \'{"id":4}\' -- ./bin/mrtr serve --stdio --fixture example',
    stdioScripted:
      'mrtr call --stdio resolve_bug --args \'{"id":4}\' --answers \'{"resolution":"Fixed","confirm":"yes"}\' -- node dist/cli/main.js serve --stdio --fixture example',
  },
  servers: {
    conformance: './bin/mrtr serve --fixture conformance --port 3001',
    workflows: './bin/mrtr serve --fixture workflows --data ./data',
    exampleOtherPort: './bin/mrtr serve --fixture example --port 3001',
  },
  auth: {
    serve: './bin/mrtr serve --fixture example --port 3000 --tokens tokens.json',
    call: './bin/mrtr call http://127.0.0.1:3000/mcp echo --args \'{"message":"hi"}\' --token alice-dev-token',
  },
  approvals: {
    serve:
      './bin/mrtr serve --fixture example --tokens examples/workflows/tokens.json --store sqlite:./data/replay.db',
    request:
      './bin/mrtr call http://127.0.0.1:3000/mcp request_access --token alice-dev-token --args \'{"resource":"prod-db","reason":"incident 4711"}\'',
    list: 'curl -H "Authorization: Bearer carol-dev-token" http://127.0.0.1:3000/mrtr/approvals',
    approve:
      'curl -H "Authorization: Bearer carol-dev-token" -H \'Content-Type: application/json\' -d \'{"decision":"approve","comment":"ok for incident 4711"}\' http://127.0.0.1:3000/mrtr/approvals/ID',
    listAsToken: 'curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:3000/mrtr/approvals',
    approveAsToken:
      'curl -H "Authorization: Bearer $TOKEN" -H \'Content-Type: application/json\' -d \'{"decision":"approve","comment":"ok for incident 4711"}\' http://127.0.0.1:3000/mrtr/approvals/ID',
  },
  workflows: {
    serve:
      './bin/mrtr serve --fixture workflows --data ./data --tokens examples/workflows/tokens.json --store sqlite:./data/replay.db --audit sqlite:./data/audit.db --audit-key-file ./data/audit-key --state-keys-file ./data/state-keys',
    resize:
      './bin/mrtr call http://127.0.0.1:3000/mcp resize_vm --args \'{"size":"large"}\' --token alice-dev-token',
    ticket:
      './bin/mrtr call http://127.0.0.1:3000/mcp create_ticket --token alice-dev-token --args \'{"title":"Laptop screen broken"}\' --answers \'{"category":"hardware","asset-1":"AST-00003"}\'',
  },
  tasks: {
    call: './bin/mrtr call http://127.0.0.1:3001/mcp confirm_delete --args \'{"filename":"notes.txt"}\' --answers \'{"confirm":{"action":"accept","content":{"confirm":true}}}\'',
  },
  gateway: {
    demo: 'npm run gateway:demo',
    tools: './bin/mrtr tools http://127.0.0.1:3100/mcp --token alice-dev-token',
    read: './bin/mrtr call http://127.0.0.1:3100/mcp files__read_text_file --token bob-dev-token --args \'{"path":"public/hello.txt"}\'',
    denied:
      './bin/mrtr call http://127.0.0.1:3100/mcp files__read_text_file --token bob-dev-token --args \'{"path":"public/../secret/key.txt"}\'',
    write:
      './bin/mrtr call http://127.0.0.1:3100/mcp files__write_file --token alice-dev-token --args \'{"path":"public/note.txt","content":"hi"}\'',
    move: './bin/mrtr call http://127.0.0.1:3100/mcp files__move_file --token alice-dev-token --args \'{"source":"public/note.txt","destination":"public/moved.txt"}\'',
    inspectorList:
      'npx @modelcontextprotocol/inspector --cli http://127.0.0.1:3100/mcp --header "Authorization: Bearer alice-dev-token" --method tools/list',
    inspectorRead:
      'npx @modelcontextprotocol/inspector --cli http://127.0.0.1:3100/mcp --header "Authorization: Bearer bob-dev-token" --method tools/call --tool-name files__read_text_file --tool-arg path=public/hello.txt',
    pinShow: './bin/mrtr gateway pin --config ./data/gateway-demo/gateway.yaml',
    pinAccept: './bin/mrtr gateway pin --config ./data/gateway-demo/gateway.yaml --accept files/write_file',
    pinAll: './bin/mrtr gateway pin --config ./data/gateway-demo/gateway.yaml --all',
    pinCheck: './bin/mrtr gateway pin --config ./data/gateway-demo/gateway.yaml --check',
  },
};

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A folder as a checkout looks to a reader: the repository's programs and examples, a fresh ./data. */
class Folder {
  readonly dir = mkdtempSync(join(tmpdir(), 'mrtr-doc-lines-'));
  port = 3000;
  env: Record<string, string> = {};
  private readonly servers: Array<() => Promise<void>> = [];

  constructor() {
    for (const part of ['bin', 'dist', 'examples', 'node_modules', 'schema', 'package.json'])
      symlinkSync(join(REPO, part), join(this.dir, part));
  }

  /** The line as it runs here: ports moved (see the top of the file) and placeholders filled. */
  private written(line: string, fill: Record<string, string>): string {
    let out = line
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${this.port}`)
      .replaceAll('127.0.0.1:3100', `127.0.0.1:${this.port}`)
      .replaceAll('127.0.0.1:3001', `127.0.0.1:${this.port}`)
      .replace(/--port (300[01]|3100)\b/, `--port ${this.port}`);
    for (const [from, to] of Object.entries(fill)) out = out.replaceAll(from, to);
    return out;
  }

  private spawn(line: string) {
    return spawn('bash', ['-c', line], {
      cwd: this.dir,
      env: { ...process.env, PATH: `${join(this.dir, 'bin')}:${process.env.PATH}`, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  run(line: string, fill: Record<string, string> = {}): Promise<Ran> {
    const child = this.spawn(this.written(line, fill));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  }

  /** Starts a `serve` line and resolves once it listens; the folder's port is the one it listens on. */
  async serve(
    line: string,
    /** Also wait for this on stderr (a gateway's "upstreams started"), an explicit signal rather than a delay. */
    saidOnStderr?: string,
  ): Promise<{ stderr: () => string; stop: () => Promise<void> }> {
    // The port after it is free too: the gateway demo puts its tracker there.
    this.port = await freePortPair();
    const written = this.written(line, {});
    const port = written.startsWith('npm run ') ? ` -- --port ${this.port}` : ` --port ${this.port}`;
    const child = this.spawn(`exec ${/--port /.test(written) ? written : `${written}${port}`}`);
    let stdout = '';
    let stderr = '';
    let ready = () => {};
    const isReady = () => stdout.includes('listening on') && (!saidOnStderr || stderr.includes(saidOnStderr));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (isReady()) ready();
    });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    };
    this.servers.push(stop);
    await new Promise<void>((resolve, reject) => {
      ready = resolve;
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (isReady()) resolve();
      });
      child.once('exit', (code) => reject(new Error(`\`${written}\` exited (${code}): ${stderr}`)));
    });
    return { stderr: () => stderr, stop };
  }

  async close() {
    for (const stop of this.servers) await stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const folders: Folder[] = [];
const folder = () => {
  const f = new Folder();
  folders.push(f);
  return f;
};
afterAll(async () => {
  for (const f of folders) await f.close();
});

const all = (group: Record<string, string>) => Object.values(group);

describe('the command lines of README.md and docs/*.md', () => {
  it('each has a run below or a reason it cannot run in a test (and each entry is still documented)', () => {
    const documented = documentedLines(REPO).map((d) => d.line);
    const covered = [...Object.keys(SKIPPED), ...Object.values(RUN).flatMap(all)];
    expect(documented.filter((line) => !covered.includes(line))).toEqual([]);
    expect(covered.filter((line) => !documented.includes(line))).toEqual([]);
  });

  it('the lines that need no server', { timeout: LONG }, async () => {
    requireBuiltCli();
    const f = folder();
    const { offline: l } = RUN;
    for (const line of [l.keys, l.keysInstalled]) {
      const r = await f.run(line);
      expect(r, line).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\w+:\S+\n$/) });
    }
    for (const line of [l.totp, l.totpFile, l.totpData]) {
      const r = await f.run(line);
      expect(r.code, `${line}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/otpauth:\/\//);
    }
    expect(existsSync(join(f.dir, 'data/totp.json'))).toBe(true);
    // With nothing on stdin, a stdio server ends when its input does.
    const stdio = await f.run(l.stdioServer);
    expect(stdio.code, stdio.stderr).toBe(0);
    // Without a terminal, a question only a person answers ends the call with exit 6, naming it.
    const byPerson = await f.run(l.stdioByPerson);
    expect(byPerson.code, byPerson.stderr).toBe(6);
    expect(byPerson.stderr).toMatch(/How was bug 4 resolved\?/);
    const scripted = await f.run(l.stdioScripted);
    expect(scripted.code, scripted.stderr).toBe(0);
    expect(scripted.stdout).toMatch(/Bug 4 resolved as Fixed/);
  });

  it('the servers the README starts on their own', { timeout: LONG }, async () => {
    requireBuiltCli();
    for (const line of all(RUN.servers)) {
      const f = folder();
      await f.serve(line);
      const r = await f.run(`./bin/mrtr tools http://127.0.0.1:3000/mcp --json`);
      expect(r.code, `${line}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout).tools.length).toBeGreaterThan(0);
    }
  });

  it("npm start's server (README), the calls, the Inspector and the audit trail", {
    timeout: LONG,
  }, async () => {
    requireBuiltCli();
    const f = folder();
    const { demo: l } = RUN;
    const served = await f.serve(l.serve);
    const tools = await f.run(l.tools);
    expect(tools.code, tools.stderr).toBe(0);
    expect(tools.stdout).toMatch(/resolve_bug/);
    const byPerson = await f.run(l.callByPerson);
    expect(byPerson.code, byPerson.stderr).toBe(6);
    expect(byPerson.stderr).toMatch(/How was bug 42 resolved\?/);
    const scripted = await f.run(l.callScripted);
    expect(scripted.code, scripted.stderr).toBe(0);
    expect(JSON.parse(scripted.stdout)).toMatchObject({ status: 'complete' });
    for (const line of [l.prompt, l.read]) {
      const r = await f.run(line);
      expect(r.code, `${line}: ${r.stderr}`).toBe(0);
    }
    for (const line of [l.inspectorList, l.inspectorEcho, l.inspectorRoots]) {
      const r = await f.run(line);
      expect(r.code, `${line}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).not.toMatch(/"isError": true/);
    }
    // Stopped (SIGTERM, and its exit waited for), the server has sealed its last checkpoint: the trail is complete.
    await served.stop();
    const flows = await f.run(`${l.flows} --json`);
    const flowId = (JSON.parse(flows.stdout) as Array<{ flowId: string | null }>).find(
      (x) => x.flowId,
    )?.flowId;
    expect(flowId, flows.stderr).toBeTruthy();
    f.env.MRTR_AUDIT_VKEY = /its verifier key is (\S+)/.exec(served.stderr())?.[1] ?? '';
    expect(f.env.MRTR_AUDIT_VKEY).toMatch(/^mrtr-audit\+/);
    for (const line of [
      l.flowsSince,
      l.flows,
      l.flowsRefused,
      l.verify,
      l.verifyInstalled,
      l.checkpoint,
      l.bundle,
      l.verifyBundle,
    ]) {
      const r = await f.run(line);
      expect(r.code, `${line}: ${r.stderr}`).toBe(0);
    }
    const ofTool = await f.run(l.flowsOfTool);
    expect(ofTool.code, ofTool.stderr).toBe(0);
    expect(ofTool.stdout).toContain('check_workspace'); // the Inspector's call above
    const show = await f.run(l.show, { '<flowId>': flowId! });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`flow ${flowId}`);
    expect(readFileSync(join(f.dir, 'q4.notes'), 'utf8')).toMatch(/mrtr-audit/);
  });

  it('docs/auth.md: the example with a tokens file, and a call with a token', { timeout: LONG }, async () => {
    requireBuiltCli();
    const f = folder();
    await f.run(`echo '{"alice-dev-token": {"sub": "alice", "roles": ["requester"]}}' > tokens.json`);
    await f.serve(RUN.auth.serve);
    const r = await f.run(RUN.auth.call);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/hi/);
  });

  it('docs/human-controls.md: a request, the inbox, an approval', { timeout: LONG }, async () => {
    requireBuiltCli();
    const f = folder();
    const { approvals: l } = RUN;
    await f.serve(l.serve);
    // alice's call becomes a task that waits for a reviewer (mrtr call declares the tasks extension).
    const request = f.run(l.request);
    let inbox: { approvals: Array<{ id: string }> } = { approvals: [] };
    for (let i = 0; i < 500 && inbox.approvals.length === 0; i++)
      inbox = JSON.parse((await f.run(l.list)).stdout);
    expect(inbox.approvals).toHaveLength(1);
    f.env.TOKEN = 'bob-dev-token';
    expect(JSON.parse((await f.run(l.listAsToken)).stdout).approvals).toHaveLength(1);
    const id = inbox.approvals[0]!.id;
    const approved = await f.run(l.approve, { '/approvals/ID': `/approvals/${id}` });
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ state: 'approved' });
    const again = await f.run(l.approveAsToken, { '/approvals/ID': `/approvals/${id}` });
    expect(JSON.parse(again.stdout)).toMatchObject({ error: expect.stringMatching(/decided|approved/) });
    const done = await request;
    expect(done.code, done.stderr).toBe(0);
    // The folder's PATH reaches its bin/mrtr (so docs' `mrtr …` lines run): the resume line says plain mrtr.
    expect(done.stderr).toMatch(/resume with: mrtr task get \S+ http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(done.stderr).toContain('waiting for approval, 0 of 1');
    expect(done.stdout).toContain('prod-db');
  });

  it('docs/tasks.md: a call that runs as a task, its status lines and result', {
    timeout: LONG,
  }, async () => {
    requireBuiltCli();
    const f = folder();
    await f.serve(RUN.servers.conformance);
    const r = await f.run(RUN.tasks.call);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('notes.txt deleted');
    expect(r.stderr).toMatch(
      /^task (\S+) — resume with: mrtr task get \1 http:\/\/127\.0\.0\.1:\d+\/mcp$/m, // bin/ is on the PATH here
    );
    expect(r.stderr).toMatch(/^task \S+: input_required — waiting for the client to answer$/m);
    expect(r.stderr).toMatch(/^task \S+: completed$/m);
  });

  it('docs/workflows.md: the workflows on their databases, two calls', { timeout: LONG }, async () => {
    requireBuiltCli();
    const f = folder();
    const { workflows: l } = RUN;
    await f.serve(l.serve);
    const resize = await f.run(l.resize);
    expect(resize.code, resize.stderr).toBe(6); // asks which VM: a person answers it in a terminal
    expect(resize.stderr).toMatch(/needs a person/);
    const ticket = await f.run(l.ticket);
    expect(ticket.code, ticket.stderr).toBe(0);
  });

  // docs/gateway.md in three steps on one gateway, each well under a minute: a test that runs past 60 s trips the
  // test runner's own worker timeout when two files run at once.
  describe('docs/gateway.md: npm run gateway:demo, a line per rule, and the pin lines', () => {
    const { gateway: l } = RUN;
    let f: Folder;

    it('the demo serves: tools, a read, the Inspector, a deny', { timeout: LONG }, async () => {
      requireBuiltCli();
      f = folder();
      // The tools line lists the filesystem server's tools: wait until it has answered its first listing.
      await f.serve(l.demo, 'upstreams started');
      const tools = await f.run(l.tools);
      expect(tools.code, tools.stderr).toBe(0);
      expect(tools.stdout).toMatch(/files__write_file/); // alice is a requester: writes (with consent) and moves
      expect(tools.stdout).toMatch(/files__move_file/);
      const read = await f.run(l.read);
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout).toContain('Hello from the share.');
      // The MCP Inspector (a 2025 client, through the bridge): alice's list, and bob's read passed upstream.
      const inspected = await f.run(l.inspectorList);
      expect(inspected.code, inspected.stderr).toBe(0);
      expect(inspected.stdout).toContain('files__write_file');
      const inspectedRead = await f.run(l.inspectorRead);
      expect(inspectedRead.code, inspectedRead.stderr).toBe(0);
      expect(inspectedRead.stdout).toContain('Hello from the share.');
      const denied = await f.run(l.denied);
      expect(denied.code, denied.stderr).toBe(1); // the tool reported an error: the rule's reason
      expect(denied.stdout).toContain('secret/ is not for agents');
      expect(`${denied.stdout}${denied.stderr}`).not.toContain('not for the agent'); // the secret's text
    });

    it('a write asks for consent; a move waits for bob, who approves over the JSON API', {
      timeout: LONG,
    }, async () => {
      // Without a terminal, the write's consent ends the call with exit 6, naming what a person must do;
      // test/cli/gateway-demo.test.ts answers it as alice, in a terminal.
      const write = await f.run(l.write);
      expect(write.code, write.stderr).toBe(6);
      expect(write.stderr).toContain('(input key "consent"; consent)');
      const share = join(f.dir, 'data/gateway-demo/share/public');
      expect(existsSync(join(share, 'note.txt'))).toBe(false);
      // The move waits for bob as a task (mrtr call declares the tasks extension); bob approves over the JSON API.
      writeFileSync(join(share, 'note.txt'), 'hi'); // as if alice had consented to the write in her terminal
      const move = f.run(l.move);
      const origin = `http://127.0.0.1:${f.port}`;
      const bob = { authorization: 'Bearer bob-dev-token', accept: 'application/json' };
      let pending: Array<{ id: string }> = [];
      for (let i = 0; i < 20_000 && pending.length === 0; i++) {
        const inbox = (await (await fetch(`${origin}/mrtr/approvals`, { headers: bob })).json()) as {
          approvals: Array<{ id: string }>;
        };
        pending = inbox.approvals;
        if (pending.length === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      expect(pending, pending.length === 0 ? JSON.stringify(await move) : '').toHaveLength(1);
      const vote = await fetch(`${origin}/mrtr/approvals/${pending[0]!.id}`, {
        method: 'POST',
        headers: { ...bob, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(vote.status).toBe(200);
      const moved = await move;
      expect(moved.code, moved.stderr).toBe(0);
      expect(moved.stderr).toContain('waiting for approval, 0 of 1 (role approver)');
      expect(existsSync(join(share, 'moved.txt'))).toBe(true);
    });

    it('the pin lines show, check, accept and pin what the upstream lists', { timeout: LONG }, async () => {
      // The gateway pinned every tool at first sight (the tools line listed them). As if the filesystem server had
      // since changed write_file's description and added move_file, the lock is given an earlier write_file and no
      // move_file; the pin lines then show, accept, and pin what the server lists.
      const lock = join(f.dir, 'data/gateway-demo/gateway.lock.json');
      type Lock = { tools: Record<string, { digest: string; definition: JsonObject }> };
      const firstSight = JSON.parse(readFileSync(lock, 'utf8')) as Lock;
      const earlier = structuredClone(firstSight);
      const writeFile = earlier.tools['files/write_file']!;
      writeFile.definition.description = 'Write a file.';
      writeFile.digest = definitionDigest(writeFile.definition);
      delete earlier.tools['files/move_file'];
      writeFileSync(lock, JSON.stringify(earlier));
      const digests = (file: Lock) =>
        Object.fromEntries(Object.entries(file.tools).map(([k, v]) => [k, v.digest]));

      const show = await f.run(l.pinShow);
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toContain(
        'changed   files/write_file (withheld until accepted: --accept files/write_file)',
      );
      expect(show.stdout).toMatch(/^ {4}description changed: /m);
      expect(show.stdout).toContain('new       files/move_file (not pinned');
      expect(show.stdout).toContain('unchanged files/read_text_file');
      expect(show.stdout).not.toContain('wrote');
      expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(earlier); // showing writes nothing
      const drifted = await f.run(l.pinCheck);
      expect(drifted.code).toBe(1); // CI fails while the lock and the upstream disagree, and nothing is written
      expect(drifted.stderr).toContain('files/move_file (new), files/write_file (changed)');
      expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(earlier);

      const accept = await f.run(l.pinAccept);
      expect(accept.code, accept.stderr).toBe(0);
      expect(accept.stdout).toContain('accepted  files/write_file (changed since it was pinned)');
      expect(accept.stdout).toContain('new       files/move_file (not pinned'); // only what --accept names
      expect(accept.stdout).toMatch(/^wrote \S*data\/gateway-demo\/gateway\.lock\.json/m);

      const all = await f.run(l.pinAll);
      expect(all.code, all.stderr).toBe(0);
      expect(all.stdout).toContain('pinned    files/move_file (new)');
      expect(all.stdout).toContain('unchanged files/write_file');
      expect(all.stdout).toMatch(/^wrote /m);
      // The lock again holds exactly what the gateway pinned at first sight.
      expect(digests(JSON.parse(readFileSync(lock, 'utf8')))).toEqual(digests(firstSight));
      const matching = await f.run(l.pinCheck);
      expect(matching.code, matching.stderr).toBe(0);
    });
  });
});
