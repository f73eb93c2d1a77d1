// The arrows between rooms, and between the server room's parts (docs/architecture.md), checked on every import in
// src/: anything else is a design change to make on purpose, by editing ARROWS or SERVER_ARROWS in boundaries.ts and
// the architecture page together.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ARROWS,
  boundaryViolations,
  importCircles,
  SERVER_ARROWS,
  SERVER_ARROWS_TO_MOVE,
  SERVER_FILES,
  type SourceFile,
  SRC,
  serverPartViolations,
  sourceFiles,
} from './boundaries.js';

describe('import boundaries', () => {
  it('every import in src/ follows the arrows between rooms', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(50);
    expect(boundaryViolations(files)).toEqual([]);
  });

  it('no file in src/ reaches itself through its imports (no import circle)', () => {
    expect(importCircles(sourceFiles())).toEqual([]);
  });

  it('finds a circle of two files, a longer one and a type-only one', () => {
    const planted: SourceFile[] = [
      { path: 'flow/a.ts', text: "import { b } from './b.js';" },
      { path: 'flow/b.ts', text: "import type { A } from './a.js';" },
      { path: 'client/x.ts', text: "export { y } from './y.js';" },
      { path: 'client/y.ts', text: "import { z } from './z.js';" },
      { path: 'client/z.ts', text: "const x = await import('./x.js');" },
      { path: 'client/w.ts', text: "import { x } from './x.js';" },
    ];
    expect(importCircles(planted)).toEqual([
      'client/x.ts → client/y.ts → client/z.ts → client/x.ts',
      'flow/a.ts → flow/b.ts → flow/a.ts',
    ]);
  });

  it('every room in src/ has a row, so a new room cannot slip in unchecked', () => {
    const rooms = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(rooms.filter((room) => !(room in ARROWS))).toEqual([]);
  });

  it('catches an upward arrow, a forbidden pair, a deep import and a path out of src/', () => {
    const planted: SourceFile[] = [
      { path: 'protocol/wire.ts', text: "import { McpServer } from '../server/index.js';" },
      { path: 'server/http.ts', text: "import type { McpClient } from '../client/index.js';" },
      { path: 'cli/call.ts', text: "import { safeText } from '../client/terminal.js';" },
      { path: 'client/sse.ts', text: "export { x } from '../../test/helpers/x.js';" },
      { path: 'state/codec.ts', text: "const m = await import('../flow/index.js');" },
      { path: 'server/round/pipeline.ts', text: "import { Deadline } from '../deadline.js';" },
      { path: 'flow/run.ts', text: "import {\n  type InputRequest,\n} from '../protocol/index.js';" },
      // auth signs its cookies with state's one signer; state stays at the bottom.
      { path: 'auth/signin/signed-value.ts', text: "import { KidSigner } from '../../state/index.js';" },
      { path: 'state/signing.ts', text: "import type { SigningKey } from '../auth/index.js';" },
    ];
    expect(boundaryViolations(planted)).toEqual([
      'protocol/wire.ts → ../server/index.js (protocol may not import server)',
      'server/http.ts → ../client/index.js (server may not import client)',
      "cli/call.ts → ../client/terminal.js (past client's index.ts and internal.ts: import from client/index.js or client/internal.js)",
      'client/sse.ts → ../../test/helpers/x.js (imports from outside src/)',
      'state/codec.ts → ../flow/index.js (state may not import flow)',
      'state/signing.ts → ../auth/index.js (state may not import auth)',
    ]);
  });

  it('inside server/, every import follows the arrows between its parts (round, methods, legacy, …)', () => {
    const violations = serverPartViolations(sourceFiles());
    const toMove = Object.keys(SERVER_ARROWS_TO_MOVE);
    expect(violations.filter((v) => !toMove.some((m) => v.startsWith(`${m} `)))).toEqual([]);
    // A move made leaves its entry behind: remove it, so the rule holds for that file from now on.
    expect(toMove.filter((m) => !violations.some((v) => v.startsWith(`${m} `)))).toEqual([]);
  });

  it('every top-level file of server/ has exactly one part, and every part and sub-folder a row', () => {
    const top = readdirSync(join(SRC, 'server'), { withFileTypes: true });
    const placed = Object.values(SERVER_FILES).flat();
    const files = top.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => e.name);
    expect(files.filter((f) => placed.filter((p) => p === f).length !== 1)).toEqual([]);
    expect(placed.filter((p) => !files.includes(p))).toEqual([]);
    const parts = [...Object.keys(SERVER_FILES), ...top.filter((e) => e.isDirectory()).map((e) => e.name)];
    expect(parts.filter((part) => !(part in SERVER_ARROWS)).sort()).toEqual([]);
    expect(Object.keys(SERVER_ARROWS).filter((part) => !parts.includes(part))).toEqual([]);
  });

  it('catches the round reaching a method, the bridge or a transport, a method the bridge, the bridge the core', () => {
    const planted: SourceFile[] = [
      { path: 'server/round/pipeline.ts', text: "import { METHODS } from '../methods/index.js';" },
      { path: 'server/round/runner.ts', text: "import type { LegacyBridge } from '../legacy/bridge.js';" },
      { path: 'server/round/notify.ts', text: "import { HttpServerTransport } from '../http.js';" },
      { path: 'server/methods/tools-call.ts', text: "import { SessionStore } from '../legacy/session.js';" },
      { path: 'server/methods/method.ts', text: "import { Dispatcher } from '../dispatch.js';" },
      { path: 'server/legacy/bridge.ts', text: "import { RoundRunner } from '../round/runner.js';" },
      { path: 'server/legacy/session.ts', text: "import type { Registry } from '../registry.js';" },
      { path: 'server/stdio.ts', text: "import { Dispatcher } from './dispatch.js';" },
      { path: 'server/registry.ts', text: "import { observe } from './round/notify.js';" },
      { path: 'server/nowhere.ts', text: '' },
      // Allowed: the methods use the round, the bridge the wire's framing, anything another room (ARROWS' job).
      { path: 'server/methods/prompts-get.ts', text: "import { RoundRunner } from '../round/runner.js';" },
      { path: 'server/legacy/http-front.ts', text: "import { sendJson } from '../http-exchange.js';" },
      { path: 'server/round/state.ts', text: "import { ask } from '../../flow/index.js';" },
    ];
    expect(serverPartViolations(planted)).toEqual([
      'server/round/pipeline.ts → ../methods/index.js (in server/, round may not import methods)',
      'server/round/runner.ts → ../legacy/bridge.js (in server/, round may not import legacy)',
      'server/round/notify.ts → ../http.js (in server/, round may not import transports)',
      'server/methods/tools-call.ts → ../legacy/session.js (in server/, methods may not import legacy)',
      'server/methods/method.ts → ../dispatch.js (in server/, methods may not import assembly)',
      'server/legacy/bridge.ts → ../round/runner.js (in server/, legacy may not import round)',
      'server/legacy/session.ts → ../registry.js (in server/, legacy may not import core)',
      'server/stdio.ts → ./dispatch.js (in server/, transports may not import assembly)',
      'server/registry.ts → ./round/notify.js (in server/, core may not import round)',
      'server/nowhere.ts (no part in SERVER_FILES or no row in SERVER_ARROWS)',
    ]);
  });

  it('what a room lends (internal.ts) is no public export: its index.ts names none of it, no package path reaches it', async () => {
    const files = sourceFiles();
    const names = (text: string) =>
      [...text.matchAll(/export(?:\s+type)?\s*\{([^}]*)\}/g)].flatMap((m) =>
        (m[1] ?? '')
          .split(',')
          .map(
            (x) =>
              x
                .replace(/\btype\s+/, '')
                .split(' as ')
                .pop()
                ?.trim() ?? '',
          )
          .filter(Boolean),
      );
    const lenders = files.filter((f) => /^[a-z]+\/internal\.ts$/.test(f.path));
    expect(lenders.map((f) => f.path).sort()).toEqual([
      'audit/internal.ts',
      'auth/internal.ts',
      'cli/internal.ts',
      'client/internal.ts',
      'controls/internal.ts',
      'flow/internal.ts',
      'gateway/internal.ts',
      'protocol/internal.ts',
      'server/internal.ts',
      'state/internal.ts',
    ]);
    // Every public entry point: the room's own index.ts, the root, and the server's and client's re-exports.
    const entries = files.filter((f) => f.path === 'index.ts' || /^[a-z]+\/index\.ts$/.test(f.path));
    const leaks = lenders.flatMap((lender) => {
      const lent = new Set(names(lender.text));
      const room = lender.path.split('/')[0];
      return entries.flatMap((entry) =>
        names(entry.text)
          .filter(
            (n) => lent.has(n) && (entry.path === `${room}/index.ts` || entry.text.includes(`../${room}/`)),
          )
          .map((n) => `${entry.path} exports ${n}, which ${lender.path} lends`),
      );
    });
    expect(leaks).toEqual([]);
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(join(SRC, '../package.json'), 'utf8')) as { exports: object };
    expect(JSON.stringify(pkg.exports)).not.toContain('internal');
  });

  it('entry points list what they export: no `export *`, so what is public is a decision', () => {
    const entries = sourceFiles().filter((f) => f.path === 'index.ts' || /^[a-z]+\/index\.ts$/.test(f.path));
    expect(entries.map((f) => f.path)).toContain('server/index.ts');
    expect(entries.filter((f) => /^export \*/m.test(f.text)).map((f) => f.path)).toEqual([]);
  });
});
