// `mrtr gateway check`'s warning for a condition that reads an argument a tool it covers does not have: CEL sees
// `args` as a map, so `args.pth` type-checks, and the rule then never matches a real call (a deny that denies nothing).
import { argumentsRead } from './condition-arguments.js';
import { compileGlob, splitToolPattern } from './glob.js';
import type { PolicyRule } from './types.js';

/** A tool as the lock file pins it: its definition holds the input schema the gateway serves. */
export interface KnownTool {
  readonly upstream: string;
  readonly tool: string;
  readonly definition: { readonly inputSchema?: unknown };
}

/** The argument names a tool's input schema declares, or undefined when it declares none (nothing to check). */
function declaredArguments(tool: KnownTool): string[] | undefined {
  const properties = (tool.definition.inputSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined;
  return Object.keys(properties);
}

/** One line per rule, tool and argument its condition reads that the tool's schema does not declare. */
export function unknownArgumentWarnings(rules: readonly PolicyRule[], tools: readonly KnownTool[]): string[] {
  const warnings: string[] = [];
  rules.forEach((rule, index) => {
    if (rule.when === undefined) return;
    const read = argumentsRead(rule.when);
    if (read.length === 0) return;
    const patterns = (rule.tools ?? []).flatMap((pattern) => {
      const parts = splitToolPattern(pattern);
      return parts ? [{ upstream: compileGlob(parts.upstream), tool: compileGlob(parts.tool) }] : [];
    });
    const label = rule.name === undefined ? `rules[${index}]` : `rules[${index}] "${rule.name}"`;
    for (const tool of tools) {
      if (!patterns.some((p) => p.upstream(tool.upstream) && p.tool(tool.tool))) continue;
      const declared = declaredArguments(tool);
      if (declared === undefined) continue;
      for (const name of read.filter((n) => !declared.includes(n)))
        warnings.push(
          `${label}: its condition reads args.${name}, but ${tool.upstream}/${tool.tool} has no argument "${name}" (it has: ${declared.join(', ') || 'none'})`,
        );
    }
  });
  return warnings;
}
