// Does a token's scope cover what an operation needs? Servers MUST account for scope hierarchies
// (authorization/index.mdx, Step-Up): a broad scope may imply narrower ones.

/** `{ "files": ["files:read", "files:write"] }`: holding the key grants every scope it lists (transitively). */
export type ScopeImplications = Readonly<Record<string, readonly string[]>>;

/** Every scope `granted` amounts to, implications followed (cycles are harmless). */
export function expandScopes(granted: readonly string[], implications: ScopeImplications): Set<string> {
  const all = new Set<string>();
  const pending = [...granted];
  while (pending.length > 0) {
    const scope = pending.pop()!;
    if (all.has(scope)) continue;
    all.add(scope);
    if (Object.hasOwn(implications, scope)) pending.push(...implications[scope]!);
  }
  return all;
}

/** The required scopes `granted` does not cover: empty when the token is sufficient. */
export function missingScopes(
  granted: readonly string[],
  required: readonly string[],
  implications: ScopeImplications = {},
): string[] {
  if (required.length === 0) return [];
  const have = expandScopes(granted, implications);
  return required.filter((scope) => !have.has(scope));
}

/** A scope token per RFC 6749 §3.3: printable ASCII except space, `"` and `\`. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
