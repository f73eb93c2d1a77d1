// `npm run build` swaps a fresh build in with one rename: dist/ is never missing or half-built, so a running
// `npm start` or `./bin/mrtr` keeps working while `npm install`/`npm test` rebuild next to it, and an interrupted
// build leaves the previous dist/ in place.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { buildAndSwap } from '../../scripts/build-swap.mjs';

const SWAP = pathToFileURL(join(import.meta.dirname, '../../scripts/build-swap.mjs')).href;
const ROOT = join(import.meta.dirname, '../..');

/** A stand-in for tsc: writes an entry point whose last line says it is complete. */
function writeBuild(outDir: string, version: string) {
  mkdirSync(join(outDir, 'cli'), { recursive: true });
  writeFileSync(join(outDir, 'cli/main.js'), `// ${version}\n// complete\n`);
}

let root: string;
const entry = () => readFileSync(join(root, 'dist/cli/main.js'), 'utf8');
const build = (version: string, during?: () => void) =>
  buildAndSwap({
    root,
    entries: ['cli/main.js'],
    compile(outDir: string) {
      during?.();
      writeBuild(outDir, version);
      during?.();
    },
  });
const buildDirs = () => readdirSync(root).filter((name) => name.startsWith('.dist-'));

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'mrtr-build-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('buildAndSwap', () => {
  it('while a build compiles, dist/ is the previous complete build; once done, the new one', async () => {
    await build('v1');
    const seen: string[] = [];
    await build('v2', () => seen.push(entry()));
    expect(seen).toEqual(['// v1\n// complete\n', '// v1\n// complete\n']);
    expect(entry()).toBe('// v2\n// complete\n');
    expect(lstatSync(join(root, 'dist')).isSymbolicLink()).toBe(true);
  });

  it('a build that fails, or lacks an entry point, leaves dist/ as it was and says so', async () => {
    await build('v1');
    await expect(
      buildAndSwap({
        root,
        entries: ['cli/main.js'],
        compile() {
          throw new Error('tsc: error TS2322');
        },
      }),
    ).rejects.toThrow('tsc: error TS2322');
    await expect(buildAndSwap({ root, entries: ['cli/main.js'], compile() {} })).rejects.toThrow(
      /build into \.dist-\S+ is missing cli\/main\.js; dist is unchanged/,
    );
    expect(entry()).toBe('// v1\n// complete\n');
  });

  it('a build killed mid-way leaves the old dist/ intact, and the next build removes its leftovers', async () => {
    await build('v1');
    const child = spawn(process.execPath, [
      '--input-type=module',
      '-e',
      `import { buildAndSwap } from ${JSON.stringify(SWAP)};
       import { mkdirSync, writeFileSync } from 'node:fs';
       await buildAndSwap({ root: ${JSON.stringify(root)}, entries: ['cli/main.js'], compile: (out) => {
         mkdirSync(out + '/cli', { recursive: true });
         writeFileSync(out + '/cli/main.js', '// half');
         process.stdout.write('compiling\\n');
         return new Promise(() => setInterval(() => {}, 1 << 30));
       } });`,
    ]);
    await lineFrom(child, 'compiling');
    await killed(child);
    expect(entry()).toBe('// v1\n// complete\n');
    expect(buildDirs()).toHaveLength(2); // v1 and the interrupted one
    await build('v2');
    expect(entry()).toBe('// v2\n// complete\n');
    expect(buildDirs()).toHaveLength(2); // v2, and v1 kept for servers still running from it
    for (const dir of buildDirs())
      expect(readFileSync(join(root, dir, 'cli/main.js'), 'utf8')).toMatch(/complete/);
  });

  it('another process reading dist/ throughout a series of builds always finds a complete entry point', async () => {
    await build('v0');
    const stop = join(root, 'stop');
    const reader = spawn(process.execPath, [
      '-e',
      `const fs = require('node:fs');
       let reads = 0, bad = 0;
       process.stdout.write('reading\\n');
       while (!fs.existsSync(${JSON.stringify(stop)})) {
         reads++;
         try { if (!fs.readFileSync(${JSON.stringify(join(root, 'dist/cli/main.js'))}, 'utf8').endsWith('// complete\\n')) bad++; }
         catch { bad++; }
       }
       process.stdout.write(JSON.stringify({ reads, bad }) + '\\n');`,
    ]);
    await lineFrom(reader, 'reading');
    for (let i = 1; i <= 30; i++) await build(`v${i}`);
    writeFileSync(stop, '');
    const report = JSON.parse(await lineFrom(reader, '{'));
    expect(report.bad).toBe(0);
    expect(report.reads).toBeGreaterThan(0);
    expect(buildDirs().length).toBeLessThanOrEqual(3); // old builds are pruned
  });

  it('for npm pack (which skips a symbolic link) dist/ is a real directory; the next build links it again', async () => {
    await build('v1');
    await buildAndSwap({
      root,
      entries: ['cli/main.js'],
      realDirectory: true,
      compile: (o: string) => writeBuild(o, 'p'),
    });
    expect(lstatSync(join(root, 'dist')).isDirectory()).toBe(true);
    expect(existsSync(join(root, 'dist/.mrtr-build-complete'))).toBe(false);
    expect(entry()).toBe('// p\n// complete\n');
    await build('v2');
    expect(lstatSync(join(root, 'dist')).isSymbolicLink()).toBe(true);
    expect(entry()).toBe('// v2\n// complete\n');
  });
});

describe('npm run build', () => {
  it('is the swapping build: dist/ is a link to a complete build (run `npm run build` first)', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.build).toBe(
      'node scripts/build.mjs',
    );
    expect(lstatSync(join(ROOT, 'dist')).isSymbolicLink()).toBe(true);
    for (const file of ['index.js', 'cli/main.js', 'workflows/index.js', '.mrtr-build-complete'])
      expect(existsSync(join(ROOT, 'dist', file)), file).toBe(true);
  });
});

/** Resolves with the first line of the child's stdout that starts with `prefix`. */
function lineFrom(child: ChildProcess, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const onData = (chunk: Buffer) => {
      buffered += chunk;
      const line = buffered.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) {
        child.stdout?.off('data', onData);
        resolve(line);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before "${prefix}": ${stderr}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
