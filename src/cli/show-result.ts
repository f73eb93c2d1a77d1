// Printing what a server returned: text for a person on a terminal (sanitized, quoted), bytes for a pipe, and JSON that
// cannot overflow the stack however deep the server nested it.
import { quoteLines, type SafeText, safe } from '../client/index.js';
import { isJsonObject } from '../protocol/index.js';
import { printLine, writeData } from './terminal/print.js';

/** Deeper than this, a result is not printed as is (JSON.stringify would overflow the stack near 10 000 levels). */
export const PRINT_DEPTH = 64;

/**
 * A copy of `value` with everything nested deeper than `maxDepth` replaced by a short note. Iterative, so a
 * 100 000-level result is pruned rather than crashing the printer.
 */
export function pruneDeep(value: unknown, maxDepth = PRINT_DEPTH): { value: unknown; pruned: boolean } {
  let pruned = false;
  const note = `[nested deeper than ${maxDepth} levels: not shown]`;
  const stack: Array<[object, Record<string, unknown> | unknown[], number]> = [];
  const make = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (depth >= maxDepth) {
      pruned = true;
      return note;
    }
    // Null-prototype copies: a server's `__proto__` key stays a key.
    const copy: Record<string, unknown> | unknown[] = Array.isArray(v) ? [] : Object.create(null);
    stack.push([v, copy, depth]);
    return copy;
  };
  const root = make(value, 0);
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const [src, dst, depth] = frame;
    if (Array.isArray(src))
      for (let i = 0; i < src.length; i++) (dst as unknown[])[i] = make(src[i], depth + 1);
    else for (const [k, x] of Object.entries(src)) (dst as Record<string, unknown>)[k] = make(x, depth + 1);
  }
  return { value: root, pruned };
}

/** JSON text of a value, pruned first; `pruned` says whether anything was left out. */
export function printableJson(value: unknown, indent?: number): { text: string; pruned: boolean } {
  const p = pruneDeep(value);
  return { text: JSON.stringify(p.value, null, indent), pruned: p.pruned };
}

/** Server text for a person on a terminal: every line behind the quote gutter, so none passes for a line of ours. */
export function printQuoted(stream: NodeJS.WritableStream, text: string): void {
  for (const line of quoteLines(text)) printLine(stream, line);
}

/** Print a tool result's content blocks: on a terminal as sanitized text, to a pipe as the server's bytes. */
export function printContent(
  result: { content?: unknown; structuredContent?: unknown },
  stream: NodeJS.WriteStream,
): { pruned: boolean } {
  let pruned = false;
  const emit = (text: string) => {
    if (stream.isTTY) printQuoted(stream, text);
    else writeData(stream, `${text}\n`);
  };
  const json = (v: unknown) => {
    const j = printableJson(v);
    pruned ||= j.pruned;
    return j.text;
  };
  const blocks = Array.isArray(result.content) ? result.content : [];
  let printed = false;
  for (const b of blocks) {
    if (!isJsonObject(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') emit(b.text);
    else if ((b.type === 'image' || b.type === 'audio') && typeof b.data === 'string')
      emit(`[${b.type} ${String(b.mimeType)}, ${Math.floor((b.data.length * 3) / 4)} bytes]`);
    else if (b.type === 'resource_link') emit(`[link ${String(b.name)}: ${String(b.uri)}]`);
    else if (b.type === 'resource' && isJsonObject(b.resource)) {
      const r = b.resource;
      emit(typeof r.text === 'string' ? r.text : `[resource ${String(r.uri)}]`);
    } else emit(json(b));
    printed = true;
  }
  if (!printed && result.structuredContent !== undefined) emit(json(result.structuredContent));
  return { pruned };
}

export const PRUNED_NOTE: SafeText = safe`parts of the result nested deeper than ${PRINT_DEPTH} levels are not shown`;
