// The MCP Inspector CLI (@modelcontextprotocol/inspector --cli, from npm) against mrtr servers over HTTP and stdio.
// It opens with the 2025 initialize handshake and answers roots/list from its config (it declares no elicitation or
// sampling in CLI mode), so the multi-round flow it completes is check_workspace: two ask.roots rounds. The audit
// trail shows the rounds went through the bridge.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveCli } from '../helpers/serve-cli.js';

const INSPECTOR = resolve('node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const MAIN = resolve('dist/cli/main.js');
const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];

/** Run the Inspector CLI with a config naming one server; its home is a fresh directory (it keeps a catalog there). */
function inspector(
  server: Record<string, unknown>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'mrtr-inspector-'));
  const config = join(home, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { s: { protocolEra: 'legacy', roots: ROOTS, ...server } } }),
  );
  return new Promise((done) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', '--config', config, '--server', 's', '--format', 'json', '-q', ...args],
      { env: { ...process.env, HOME: home, MCP_INSPECTOR_SECRET_STORE: 'memory' }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const auditLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; record?: Record<string, unknown> })
    .filter((l) => l.type === 'event' && l.record?.method === 'tools/call')
    .map((l) => l.record!);

for (const transport of ['http', 'stdio'] as const) {
  describe(`the Inspector CLI over ${transport}`, () => {
    async function target(audit?: string): Promise<Record<string, unknown>> {
      const auditArgs = audit ? ['--audit', `jsonl:${audit}`] : [];
      if (transport === 'stdio')
        return {
          command: process.execPath,
          args: [MAIN, 'serve', '--fixture', 'example', '--stdio', ...auditArgs],
        };
      const { url } = await serveCli(['--fixture', 'example', '--port', '0', ...auditArgs]);
      return { type: 'streamable-http', url };
    }

    it('lists the tools', async () => {
      const r = await inspector(await target(), ['--method', 'tools/list']);
      expect(r.code, r.stderr).toBe(0);
      const names = (JSON.parse(r.stdout) as { result: { tools: { name: string }[] } }).result.tools.map(
        (t) => t.name,
      );
      expect(names).toEqual(['resolve_bug', 'check_workspace', 'echo', 'request_access', 'grant_role']);
    });

    it('completes the two-round check_workspace flow, each round recorded as bridged', async () => {
      const audit = join(mkdtempSync(join(tmpdir(), 'mrtr-audit-')), 'audit.jsonl');
      const r = await inspector(await target(audit), [
        '--method',
        'tools/call',
        '--tool-name',
        'check_workspace',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { result: { content: unknown } }).result.content).toEqual([
        { type: 'text', text: 'Indexed 1 root(s), unchanged: file:///work/project' },
      ]);
      const rounds = auditLines(audit);
      // Each round's intent, then its outcome, both marked as bridged.
      expect(rounds.map((e) => [e.round, e.outcome, e.bridged])).toEqual([
        [0, 'proposed', '2025-11-25'],
        [0, 'input_required', '2025-11-25'],
        [1, 'proposed', '2025-11-25'],
        [1, 'input_required', '2025-11-25'],
        [2, 'proposed', '2025-11-25'],
        [2, 'complete', '2025-11-25'],
      ]);
      expect(new Set(rounds.map((e) => e.flowId)).size).toBe(1);
    });
  });
}
