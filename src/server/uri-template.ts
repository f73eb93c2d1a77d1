// RFC 6570 URI templates, the subset resource templates use: simple `{var}` and reserved `{+var}` expansions.
// Hand-written because matching (URI → variables) is what we need, and common libraries only expand. Matching is
// linear in the URI's length: a regular expression with several lazy groups backtracks in cubic time on a URI that
// almost matches, which let one 8 KB request hold the event loop for ~40 s.
import { registrationError } from './errors.js';

interface Expression {
  name: string;
  /** A reserved expansion may span path segments; a simple one stops at '/', '?' and '#'. */
  reserved: boolean;
  /** The literal text that follows this expression (possibly empty). */
  after: string;
}

/** Characters a value may not contain: what `[^/?#]` and `.` (no line terminators) excluded before. */
const stopsSimple = (c: number) => c === 0x2f || c === 0x3f || c === 0x23;
const stopsReserved = (c: number) => c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;

export class UriTemplate {
  readonly variables: string[] = [];
  private readonly prefix: string;
  private readonly expressions: Expression[] = [];

  constructor(readonly template: string) {
    let last = 0;
    let prefix: string | undefined;
    for (const m of template.matchAll(/\{([+#]?)([A-Za-z0-9_.,]+)\}/g)) {
      const literal = template.slice(last, m.index);
      if (prefix === undefined) prefix = literal;
      else this.expressions.at(-1)!.after = literal;
      if (m[2]!.includes(','))
        throw registrationError(`URI template ${template}: one variable per expression is supported`);
      this.variables.push(m[2]!);
      this.expressions.push({ name: m[2]!, reserved: m[1] !== '', after: '' });
      last = m.index + m[0].length;
    }
    const tail = template.slice(last);
    if (prefix === undefined) prefix = tail;
    else this.expressions.at(-1)!.after = tail;
    this.prefix = prefix;
  }

  /**
   * The variables of `uri`, or undefined when it does not match. Each value is the shortest that lets the rest of
   * the URI match (what lazy regular-expression groups would give), found in O(length × expressions).
   */
  match(uri: string): Record<string, string> | undefined {
    if (!uri.startsWith(this.prefix)) return undefined;
    const n = uri.length;
    const k = this.expressions.length;
    if (k === 0) return uri.length === this.prefix.length ? Object.create(null) : undefined;
    // next[j][p]: the smallest end q ≥ p of expression j's value such that its literal follows at q and the rest of
    // the URI matches from there (n + 1 when there is none). Built right to left, one array per expression.
    const next: Int32Array[] = new Array(k);
    let restMatches = (p: number) => p === n; // after the last expression's literal: the end of the URI
    for (let j = k - 1; j >= 0; j--) {
      const { after } = this.expressions[j]!;
      const ends = new Int32Array(n + 2).fill(n + 1);
      const rest = restMatches;
      for (let q = n; q >= 0; q--) {
        const here = uri.startsWith(after, q) && rest(q + after.length);
        ends[q] = here ? q : ends[q + 1]!;
      }
      next[j] = ends;
      const reach = valueReach(uri, this.expressions[j]!.reserved);
      // Expression j can start at p when some end in (p, reach[p]] works: a value is never empty.
      restMatches = (p: number) => p < n && ends[p + 1]! <= reach[p]!;
    }
    if (!restMatches(this.prefix.length)) return undefined;
    // Variable names are the author's, values the client's: a null prototype keeps `__proto__` a plain key.
    const out: Record<string, string> = Object.create(null);
    let p = this.prefix.length;
    for (let j = 0; j < k; j++) {
      const { name, after } = this.expressions[j]!;
      const q = next[j]![p + 1]!;
      const raw = uri.slice(p, q);
      try {
        out[name] = decodeURIComponent(raw);
      } catch {
        out[name] = raw;
      }
      p = q + after.length;
    }
    return out;
  }
}

/** reach[p]: the furthest end of a value starting at p (values may not contain their stop characters). */
function valueReach(uri: string, reserved: boolean): Int32Array {
  const stops = reserved ? stopsReserved : stopsSimple;
  const n = uri.length;
  const reach = new Int32Array(n + 1);
  reach[n] = n;
  for (let p = n - 1; p >= 0; p--) reach[p] = stops(uri.charCodeAt(p)) ? p : reach[p + 1]!;
  return reach;
}
