// What changed between a pinned tool definition and the one an upstream lists now, in lines a person can judge:
// `mrtr gateway pin --diff` prints them and the gateway logs them when it withholds a changed tool. A rug pull
// usually hides in a few words added to a description, so a changed text shows only the part that differs.
import { isJsonObject, type JsonObject } from '../../protocol/index.js';
import { canonicalJson } from '../../state/index.js';
import { definitionDigest } from './digest.js';

/** Longest value or changed text shown on one line; the rest is counted, not shown. */
const SHOWN = 200;

/**
 * One line per change, in a stable order: name, title, description, inputSchema (property by property, then
 * `required` and its other keywords), outputSchema, annotations (hint by hint). Empty when the pinned fields are
 * the same; `definition changed` alone if they differ in a way no finer line names.
 */
export function describeDrift(pinned: JsonObject, seen: JsonObject): string[] {
  const lines: string[] = [];
  diffValue('name', pinned.name, seen.name, lines);
  diffValue('title', pinned.title, seen.title, lines);
  diffValue('description', pinned.description, seen.description, lines);
  diffSchema('inputSchema', pinned.inputSchema, seen.inputSchema, lines);
  diffSchema('outputSchema', pinned.outputSchema, seen.outputSchema, lines);
  diffMembers('annotations', pinned.annotations, seen.annotations, lines);
  // A prompt's, resource's or template's own fields (a tool has none of them).
  for (const field of ['arguments', 'uri', 'uriTemplate', 'mimeType'])
    diffValue(field, pinned[field], seen[field], lines);
  const differ = (kind: 'tool' | 'surface') =>
    definitionDigest(pinned, kind) !== definitionDigest(seen, kind);
  if (lines.length === 0 && (differ('tool') || differ('surface'))) lines.push('definition changed');
  return lines;
}

/** A JSON Schema: each property on its own, then the other keywords (`required`, `additionalProperties`, …). */
function diffSchema(label: string, before: unknown, after: unknown, lines: string[]): void {
  if (!isJsonObject(before) || !isJsonObject(after)) {
    diffValue(label, before, after, lines);
    return;
  }
  const beforeProperties = before.properties ?? {};
  const afterProperties = after.properties ?? {};
  if (isJsonObject(beforeProperties) && isJsonObject(afterProperties)) {
    for (const name of unionOfKeys(beforeProperties, afterProperties)) {
      const was = beforeProperties[name];
      const now = afterProperties[name];
      const property = `${label} property ${JSON.stringify(name)}`;
      // A property changed in place is shown keyword by keyword: "its description changed" is what matters.
      if (isJsonObject(was) && isJsonObject(now)) diffMembers(property, was, now, lines);
      else diffValue(property, was, now, lines);
    }
  } else {
    diffValue(`${label} properties`, before.properties, after.properties, lines);
  }
  for (const keyword of unionOfKeys(before, after)) {
    if (keyword !== 'properties') diffValue(`${label} ${keyword}`, before[keyword], after[keyword], lines);
  }
}

/** An object compared member by member (annotations, one schema property). */
function diffMembers(label: string, before: unknown, after: unknown, lines: string[]): void {
  if (!isJsonObject(before) || !isJsonObject(after)) {
    diffValue(label, before, after, lines);
    return;
  }
  for (const key of unionOfKeys(before, after)) diffValue(`${label} ${key}`, before[key], after[key], lines);
}

function diffValue(label: string, before: unknown, after: unknown, lines: string[]): void {
  if (before === undefined && after === undefined) return;
  if (before === undefined) lines.push(`${label} added: ${preview(after)}`);
  else if (after === undefined) lines.push(`${label} removed (was ${preview(before)})`);
  else if (canonicalJson(before) === canonicalJson(after)) return;
  else if (typeof before === 'string' && typeof after === 'string')
    lines.push(`${label} changed: ${textChange(before, after)}`);
  else lines.push(`${label} changed: ${preview(before)} → ${preview(after)}`);
}

/** Only the differing middle of two texts, with `…` where a common start or end was left out. */
function textChange(before: string, after: string): string {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (
    end < before.length - start &&
    end < after.length - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  )
    end++;
  const lead = start > 0 ? '…' : '';
  const tail = end > 0 ? '…' : '';
  const middle = (text: string) => shorten(JSON.stringify(text.slice(start, text.length - end)));
  return `${lead}${middle(before)}${tail} → ${lead}${middle(after)}${tail}`;
}

function preview(value: unknown): string {
  return shorten(canonicalJson(value));
}

function shorten(text: string): string {
  return text.length <= SHOWN ? text : `${text.slice(0, SHOWN)}… (+${text.length - SHOWN} characters)`;
}

function unionOfKeys(a: JsonObject, b: JsonObject): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}
