// Small builders for the results handlers return most often.
import type { ToolResult } from './handlers.js';

/** A tool result with one text block. */
export function text(value: string, options: { isError?: boolean } = {}): ToolResult {
  return options.isError
    ? { content: [{ type: 'text', text: value }], isError: true }
    : { content: [{ type: 'text', text: value }] };
}
