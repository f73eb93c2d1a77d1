#!/usr/bin/env node
// Keeps the code in README.md and docs/*.md identical to examples/*.ts, which `npm run typecheck` compiles, so a
// documented example cannot rot. A fenced TypeScript block preceded by
//
//   <!-- example: examples/tour.ts#tour -->
//
// holds the lines of examples/tour.ts between `// #region tour` and `// #endregion` (every region of that name, in
// order, each dedented, joined by a blank line); without `#name`, the whole file minus region markers. A fragment
// that is not meant to compile (a list of type shapes, say) is marked `<!-- example-skip: why -->` instead. A
// TypeScript or JavaScript block with neither marker is an error, so new unchecked snippets cannot sneak in.
//
//   node scripts/sync-doc-examples.mjs            rewrite the marked blocks from their sources
//   node scripts/sync-doc-examples.mjs --check    change nothing; exit 1 and list what differs or is unmarked
//   --root DIR                                    work on DIR instead of this repository (the tests use it)
//
// Requires Node >= 20.11 (import.meta.dirname).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const CODE_LANGUAGES = new Set(['ts', 'tsx', 'typescript', 'js', 'mjs', 'javascript']);
const EXAMPLE_MARKER = /^<!--\s*example:\s*(\S+?)(?:#(\S+))?\s*-->$/;
const SKIP_MARKER = /^<!--\s*example-skip:\s*\S.*-->$/;
const REGION_START = /^\s*\/\/\s*#region\s+(\S+)\s*$/;
const REGION_END = /^\s*\/\/\s*#endregion\b/;

/** The Markdown files whose code is checked: README.md and docs/*.md. */
function docFiles(root) {
  const docs = join(root, 'docs');
  const inDocs = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => join(docs, name))
    : [];
  return [join(root, 'README.md'), ...inDocs].filter((file) => existsSync(file));
}

function dedent(lines) {
  const indents = lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)[0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return lines.map((line) => line.slice(cut));
}

function trimBlankEdges(lines) {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start].trim() === '') start++;
  while (end > start && lines[end - 1].trim() === '') end--;
  return lines.slice(start, end);
}

/** The text a marker stands for; throws an Error whose message says what is wrong with the source. */
function exampleText(root, file, region) {
  const path = join(root, file);
  if (!existsSync(path)) throw new Error(`${file} does not exist`);
  const lines = readFileSync(path, 'utf8').replace(/\n$/, '').split('\n');
  if (region === undefined)
    return lines.filter((l) => !REGION_START.test(l) && !REGION_END.test(l)).join('\n');
  const segments = [];
  const open = [];
  let current;
  for (const [index, line] of lines.entries()) {
    const start = REGION_START.exec(line);
    if (start) {
      open.push(start[1]);
      if (start[1] === region && current === undefined) current = [];
      continue;
    }
    if (REGION_END.test(line)) {
      if (open.length === 0) throw new Error(`${file}:${index + 1}: #endregion without a #region`);
      open.pop();
      if (current !== undefined && !open.includes(region)) {
        segments.push(dedent(trimBlankEdges(current)).join('\n'));
        current = undefined;
      }
      continue;
    }
    current?.push(line);
  }
  if (open.length > 0) throw new Error(`${file}: #region ${open.at(-1)} is never closed`);
  if (segments.length === 0) throw new Error(`${file} has no region '${region}'`);
  return segments.join('\n\n');
}

/**
 * Walk one Markdown file. Returns its text with every marked block replaced by its source, the blocks that differed
 * (`stale`), and the errors no rewrite fixes: unmarked code blocks, broken markers, missing sources.
 */
function syncMarkdown(root, markdownPath) {
  const name = relative(root, markdownPath);
  const lines = readFileSync(markdownPath, 'utf8').split('\n');
  const out = [];
  const stale = [];
  const errors = [];
  let pending; // the marker line just seen: { line, file, region } or { line, skip: true }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (!fence) {
      out.push(line);
      const example = EXAMPLE_MARKER.exec(line.trim());
      if (example) pending = { line: i + 1, file: example[1], region: example[2] };
      else if (SKIP_MARKER.test(line.trim())) pending = { line: i + 1, skip: true };
      else if (line.trim() !== '' && pending) {
        errors.push(`${name}:${pending.line}: the marker is not followed by a code block`);
        pending = undefined;
      }
      continue;
    }
    // A code block: find its end, then decide what it must contain.
    const [, indent, ticks, language] = fence;
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(ticks)) end++;
    const body = lines.slice(i + 1, end);
    const marker = pending;
    pending = undefined;
    out.push(line);
    if (marker && !marker.skip) {
      try {
        const wanted = exampleText(root, marker.file, marker.region)
          .split('\n')
          .map((l) => (l === '' ? '' : indent + l));
        const source = marker.region ? `${marker.file}#${marker.region}` : marker.file;
        if (wanted.join('\n') !== body.join('\n')) stale.push(`${name}:${i + 1} (${source})`);
        out.push(...wanted);
      } catch (error) {
        errors.push(`${name}:${marker.line}: ${error.message}`);
        out.push(...body);
      }
    } else {
      if (!marker && CODE_LANGUAGES.has(language.toLowerCase())) {
        errors.push(
          `${name}:${i + 1}: a \`${language}\` block without <!-- example: examples/FILE.ts#region --> ` +
            '(or <!-- example-skip: why --> for a fragment not meant to compile)',
        );
      }
      out.push(...body);
    }
    if (end < lines.length) out.push(lines[end]);
    i = end;
  }
  if (pending) errors.push(`${name}:${pending.line}: the marker is not followed by a code block`);
  return { text: out.join('\n'), stale, errors };
}

function main(argv) {
  const check = argv.includes('--check');
  const rootFlag = argv.indexOf('--root');
  const root = rootFlag >= 0 ? argv[rootFlag + 1] : join(import.meta.dirname, '..');
  let failed = false;
  let anyStale = false;
  for (const file of docFiles(root)) {
    const { text, stale, errors } = syncMarkdown(root, file);
    for (const e of errors) process.stderr.write(`${e}\n`);
    if (errors.length) failed = true;
    if (check) {
      for (const s of stale) process.stderr.write(`${s}: differs from its source\n`);
      if (stale.length) anyStale = failed = true;
    } else if (stale.length) {
      writeFileSync(file, text);
      for (const s of stale) process.stdout.write(`updated ${s}\n`);
    }
  }
  if (anyStale) {
    process.stderr.write(
      'docs and examples disagree: run `node scripts/sync-doc-examples.mjs` and commit both\n',
    );
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
