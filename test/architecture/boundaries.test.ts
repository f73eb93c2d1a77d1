// The arrows between rooms (docs/architecture.md), checked on every import in src/: anything else is a design
// change to make on purpose, by editing ARROWS in boundaries.ts and the architecture page together.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ARROWS, boundaryViolations, type SourceFile, SRC, sourceFiles } from './boundaries.js';

describe('import boundaries', () => {
  it('every import in src/ follows the arrows between rooms', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(50);
    expect(boundaryViolations(files)).toEqual([]);
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
      "cli/call.ts → ../client/terminal.js (past client's index.ts: import from client/index.js)",
      'client/sse.ts → ../../test/helpers/x.js (imports from outside src/)',
      'state/codec.ts → ../flow/index.js (state may not import flow)',
      'state/signing.ts → ../auth/index.js (state may not import auth)',
    ]);
  });

  it('entry points list what they export: no `export *`, so what is public is a decision', () => {
    const entries = sourceFiles().filter((f) => f.path === 'index.ts' || /^[a-z]+\/index\.ts$/.test(f.path));
    expect(entries.map((f) => f.path)).toContain('server/index.ts');
    expect(entries.filter((f) => /^export \*/m.test(f.text)).map((f) => f.path)).toEqual([]);
  });
});
