// The shell command lines of README.md and docs/*.md, as a reader copies them: the lines of ```sh blocks, the
// `$ `-prompted lines of transcripts and the commands of plain blocks, with `\` continuations joined and trailing
// `# comments` dropped; and, in the prose, code spans that are a whole `./bin/mrtr …` line (shorter mentions such as
// `mrtr serve --fixture` are references, not lines to copy). Only lines that run something of the project are
// collected: mrtr, npm, npx, node, curl.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocumentedLine {
  file: string;
  line: string;
}

const RUNS = /^(\.\/bin\/mrtr|mrtr|npm|npx|node|curl|PATH=\S+ npx)\s/;

export function documentedLines(repo: string): DocumentedLine[] {
  const files = [
    'README.md',
    ...readdirSync(join(repo, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const found: DocumentedLine[] = [];
  for (const file of files) {
    const text = readFileSync(join(repo, file), 'utf8');
    for (const block of text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
      const lang = block[1] ?? '';
      if (!['', 'sh', 'text'].includes(lang)) continue;
      const lines = joinContinuations(block[2] ?? '');
      // A transcript shows its commands after a `$ ` prompt, the rest is output; a plain block without prompts may
      // hold a command as is (but not a usage synopsis).
      const transcript = lang === 'text' || lines.some((l) => l.startsWith('$ '));
      for (const raw of lines) {
        let line = raw.trim();
        if (lang !== 'sh') {
          if (line.startsWith('$ ')) line = line.slice(2);
          else if (transcript || /<\w+>|\[--/.test(line)) continue;
        }
        line = dropComment(line).trim().replace(/\s+/g, ' ');
        if (RUNS.test(`${line} `) && !found.some((f) => f.line === line)) found.push({ file, line });
      }
    }
    const prose = text.replace(/^```[\s\S]*?^```/gm, '');
    for (const span of prose.matchAll(/`(\.\/bin\/mrtr [^`]+)`/g)) {
      const line = (span[1] ?? '').trim().replace(/\s+/g, ' ');
      if (!found.some((f) => f.line === line)) found.push({ file, line });
    }
  }
  return found;
}

function joinContinuations(body: string): string[] {
  const lines: string[] = [];
  let pending = '';
  for (const line of body.split('\n')) {
    if (line.trimEnd().endsWith('\\')) pending += `${line.trimEnd().slice(0, -1).trimEnd()} `;
    else {
      lines.push(pending + (pending ? line.trim() : line));
      pending = '';
    }
  }
  return lines;
}

/** The line without a trailing `# comment` (a # outside quotes, after a space). */
function dropComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) return line.slice(0, i);
  }
  return line;
}
