// A condition's string literals in the form the arguments they meet are in. Path arguments reach the policy in NFC
// (paths.ts), so every literal is put in NFC too: a rule written `"/srv/prive\u0301"` must deny what `privé` denies.
// For a case-insensitive upstream, path arguments are also case-folded: the literals compared with a path are folded
// the same way, and a `matches()` on a path ignores case. Literals that meet no path (`caller.subject == "Bob"`) keep
// their case, so a fold never widens a comparison on anything else.
import type { parse } from '@bufbuild/cel';

type Expr = ReturnType<typeof parse>['expr'];

/** How a case-insensitive upstream spells its paths: which arguments are paths, and their one case. */
export interface LiteralFold {
  readonly isPath: (argument: string) => boolean;
  readonly fold: (literal: string) => string;
}

/** Functions whose result still spells (part of) the path they are called on. */
const PATH_DERIVED = new Set(['_[_]', 'split', 'substring', 'trim', 'replace']);

/** Every string literal of `expr` put in NFC, in place. */
export function literalsInNfc(expr: Expr | undefined): void {
  walk(expr, (e) => {
    const kind = e.exprKind;
    if (kind.case === 'constExpr' && kind.value.constantKind.case === 'stringValue')
      kind.value.constantKind.value = kind.value.constantKind.value.normalize('NFC');
  });
}

/** The literals of `expr` that meet a path argument folded with `fold`, in place (after literalsInNfc). */
export function foldPathLiterals(expr: Expr | undefined, fold: LiteralFold): void {
  const pathVars = new Set<string>();
  const isPath = (e: Expr | undefined): boolean => {
    if (!e) return false;
    const kind = e.exprKind;
    if (kind.case === 'selectExpr')
      return isArgs(kind.value.operand) && !kind.value.testOnly && fold.isPath(kind.value.field);
    if (kind.case === 'identExpr') return pathVars.has(kind.value.name);
    if (kind.case === 'callExpr') {
      const { target, args } = kind.value;
      const fn = kind.value.function;
      if (fn === '_[_]' && isArgs(args[0])) return fold.isPath(stringConstant(args[1]) ?? '');
      if (PATH_DERIVED.has(fn)) return isPath(target ?? args[0]);
    }
    return false;
  };
  const visit = (e: Expr | undefined): void => {
    if (!e) return;
    const kind = e.exprKind;
    if (kind.case === 'comprehensionExpr') {
      const c = kind.value;
      visit(c.iterRange);
      visit(c.accuInit);
      // `args.paths.exists(p, …)`: inside, `p` is a path.
      const added = isPath(c.iterRange) && !pathVars.has(c.iterVar);
      if (added) pathVars.add(c.iterVar);
      visit(c.loopCondition);
      visit(c.loopStep);
      if (added) pathVars.delete(c.iterVar);
      visit(c.result);
      return;
    }
    if (kind.case === 'callExpr') {
      const { target, args } = kind.value;
      const operands = target ? [target, ...args] : args;
      if (operands.some(isPath)) {
        if (kind.value.function === 'matches') ignoreCase(args[args.length - 1]);
        else for (const operand of operands) foldOperand(operand, fold.fold);
      }
    }
    for (const child of children(e)) visit(child);
  };
  visit(expr);
}

const isArgs = (e: Expr | undefined) => e?.exprKind.case === 'identExpr' && e.exprKind.value.name === 'args';

function stringConstant(e: Expr | undefined): string | undefined {
  const kind = e?.exprKind;
  return kind?.case === 'constExpr' && kind.value.constantKind.case === 'stringValue'
    ? kind.value.constantKind.value
    : undefined;
}

/** A literal, a list of literals (`in [...]`), or literals joined by `+`: folded. */
function foldOperand(e: Expr | undefined, fold: (s: string) => string): void {
  const kind = e?.exprKind;
  if (!kind) return;
  if (kind.case === 'constExpr' && kind.value.constantKind.case === 'stringValue')
    kind.value.constantKind.value = fold(kind.value.constantKind.value);
  else if (kind.case === 'listExpr') for (const item of kind.value.elements) foldOperand(item, fold);
  else if (kind.case === 'callExpr' && kind.value.function === '_+_')
    for (const item of kind.value.args) foldOperand(item, fold);
}

/** A `matches()` pattern on a folded path: RE2's `(?i)` (folding the pattern itself would turn `\D` into `\d`). */
function ignoreCase(e: Expr | undefined): void {
  const kind = e?.exprKind;
  if (kind?.case === 'constExpr' && kind.value.constantKind.case === 'stringValue')
    kind.value.constantKind.value = `(?i)${kind.value.constantKind.value}`;
}

function children(e: Expr): (Expr | undefined)[] {
  const kind = e.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      return [kind.value.operand];
    case 'callExpr':
      return [kind.value.target, ...kind.value.args];
    case 'listExpr':
      return kind.value.elements;
    case 'structExpr':
      return kind.value.entries.flatMap((entry) => [
        entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined,
        entry.value,
      ]);
    case 'comprehensionExpr':
      return [
        kind.value.iterRange,
        kind.value.accuInit,
        kind.value.loopCondition,
        kind.value.loopStep,
        kind.value.result,
      ];
    default:
      return [];
  }
}

function walk(e: Expr | undefined, each: (e: Expr) => void): void {
  if (!e) return;
  each(e);
  for (const child of children(e)) walk(child, each);
}
