// RFC 6570 URI templates, the subset resource templates use: simple `{var}` and reserved `{+var}` expansions.
// Hand-written because matching (URI → variables) is what we need, and common libraries only expand.
import { registrationError } from './errors.js';

export class UriTemplate {
  readonly variables: string[] = [];
  private readonly pattern: RegExp;

  constructor(readonly template: string) {
    let source = '^';
    let last = 0;
    for (const m of template.matchAll(/\{([+#]?)([A-Za-z0-9_.,]+)\}/g)) {
      source += escapeRegExp(template.slice(last, m.index));
      const reserved = m[1] !== '';
      if (m[2]!.includes(','))
        throw registrationError(`URI template ${template}: one variable per expression is supported`);
      this.variables.push(m[2]!);
      // A simple expansion stops at '/', a reserved one may span path segments.
      source += reserved ? '(.+?)' : '([^/?#]+?)';
      last = m.index + m[0].length;
    }
    source += `${escapeRegExp(template.slice(last))}$`;
    this.pattern = new RegExp(source);
  }

  match(uri: string): Record<string, string> | undefined {
    const m = this.pattern.exec(uri);
    if (!m) return undefined;
    // Variable names are the author's, values the client's: a null prototype keeps `__proto__` a plain key.
    const out: Record<string, string> = Object.create(null);
    this.variables.forEach((name, i) => {
      const raw = m[i + 1] ?? '';
      try {
        out[name] = decodeURIComponent(raw);
      } catch {
        out[name] = raw;
      }
    });
    return out;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
