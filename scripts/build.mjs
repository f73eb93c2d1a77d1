// `npm run build` (and the prepare script of `npm install`): compiles src/ and the workflows into a fresh directory and
// swaps it in as dist/ with one rename (scripts/build-swap.mjs), so nothing running from dist/ sees it missing.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { buildAndSwap } from './build-swap.mjs';

const root = join(import.meta.dirname, '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (...args) => execFileSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });

try {
  await buildAndSwap({
    root,
    compile(outDir) {
      run('-p', 'tsconfig.build.json', '--outDir', outDir);
      // The workflows import mrtr by name, as users do (the public API only): check them against the declarations
      // just built, not against whatever dist/ held before.
      const config = join(outDir, 'tsconfig.workflows.json');
      writeFileSync(
        config,
        JSON.stringify({
          extends: join(root, 'tsconfig.workflows.json'),
          compilerOptions: {
            outDir: join(outDir, 'workflows'),
            paths: { mrtr: [join(outDir, 'index.d.ts')], 'mrtr/*': [join(outDir, '*/index.d.ts')] },
          },
        }),
      );
      run('-p', config);
      rmSync(config);
    },
    entries: ['index.js', 'cli/main.js', 'workflows/index.js'],
    // npm pack and publish do not follow a symbolic link: give them a real directory.
    realDirectory: process.env.npm_command === 'pack' || process.env.npm_command === 'publish',
    log: (line) => process.stderr.write(`build: ${line}\n`),
  });
} catch (error) {
  process.stderr.write(`build failed, dist/ is unchanged: ${error.message}\n`);
  process.exitCode = 1;
}
