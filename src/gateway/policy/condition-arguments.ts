// Which arguments a rule's `when` reads by name (`args.path`, `args["path"]`, `has(args.path)`, `"path" in args`):
// `mrtr gateway check` compares them with the tools' schemas, since a misspelt name type-checks (args is a map) and
// then quietly never matches.
import { parse } from '@bufbuild/cel';

interface Node {
  readonly $typeName?: string;
  readonly exprKind?: { readonly case?: string; readonly value?: unknown };
}

const isArgs = (node: unknown): boolean => {
  const kind = (node as Node | undefined)?.exprKind;
  return kind?.case === 'identExpr' && (kind.value as { name?: string }).name === 'args';
};

const stringConstant = (node: unknown): string | undefined => {
  const kind = (node as Node | undefined)?.exprKind;
  if (kind?.case !== 'constExpr') return undefined;
  const constant = (kind.value as { constantKind?: { case?: string; value?: unknown } }).constantKind;
  return constant?.case === 'stringValue' ? (constant.value as string) : undefined;
};

/** The argument names `source` reads, in order of first use; none for a condition that does not parse. */
export function argumentsRead(source: string): string[] {
  let root: unknown;
  try {
    root = parse(source).expr;
  } catch {
    return [];
  }
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null) return;
    const kind = (value as Node).exprKind;
    if (kind?.case === 'selectExpr') {
      const select = kind.value as { operand?: unknown; field?: string };
      if (isArgs(select.operand) && select.field !== undefined) names.add(select.field);
    } else if (kind?.case === 'callExpr') {
      const call = kind.value as { function?: string; args?: unknown[] };
      const [first, second] = call.args ?? [];
      const indexed = call.function === '_[_]' && isArgs(first) ? stringConstant(second) : undefined;
      const tested = call.function === '@in' && isArgs(second) ? stringConstant(first) : undefined;
      const name = indexed ?? tested;
      if (name !== undefined) names.add(name);
    }
    // Every field, arrays included: call arguments, comprehension parts, list and map entries.
    for (const child of Object.values(value)) visit(child);
  };
  visit(root);
  return [...names];
}
