// `mrtr prompt <url> <name>`: get a prompt through all its input rounds, like `mrtr call` does for a tool.
import { isJsonObject, type JsonObject } from '../protocol/index.js';
import { EXIT, type MrtrCommand, mrtrCommand } from './call.js';
import { UsageError } from './cli-args.js';
import { printableJson, printQuoted } from './show-result.js';
import { writeData } from './terminal/print.js';

export const PROMPT_USAGE = `usage: mrtr prompt <url> <name> [--args JSON] [--answers JSON] [--token T] [--json]
                   [--max-rounds N] [--timeout SECONDS]
       mrtr prompt --stdio <name> [options] [--env NAME[=VALUE]]… -- <command> [args…]

  Gets the prompt (prompts/get), answering its questions as mrtr call does (see mrtr call --help);
  --args are the prompt's arguments, a JSON object of strings. Prints each message as "role: text".
  Exit codes as for mrtr call.
`;

/** "role: text" per message; other content as JSON. */
function printMessages(result: JsonObject, stream: NodeJS.WriteStream): { pruned: boolean } {
  let pruned = false;
  const emit = (text: string) => (stream.isTTY ? printQuoted(stream, text) : writeData(stream, `${text}\n`));
  if (typeof result.description === 'string') emit(`# ${result.description}`);
  for (const m of Array.isArray(result.messages) ? result.messages : []) {
    if (!isJsonObject(m)) continue;
    const c = m.content;
    if (isJsonObject(c) && c.type === 'text' && typeof c.text === 'string')
      emit(`${String(m.role)}: ${c.text}`);
    else {
      const j = printableJson(c);
      pruned ||= j.pruned;
      emit(`${String(m.role)}: ${j.text}`);
    }
  }
  return { pruned };
}

export const PROMPT: MrtrCommand = {
  name: 'prompt',
  usage: PROMPT_USAGE,
  target: 'name',
  takesArgs: true,
  checkArgs: (args) => {
    // prompts/get arguments are strings (server/prompts.mdx): say so before anything is sent.
    for (const [k, v] of Object.entries(args))
      if (typeof v !== 'string')
        throw new UsageError(`--args["${k}"] must be a string (prompt arguments are strings)`);
  },
  run: (client, name, args, options) => client.getPrompt(name, args as Record<string, string>, options),
  print: (result, stream) => printMessages(result as JsonObject, stream),
};

export function promptCommand(argv: string[]): Promise<number> {
  return mrtrCommand(argv, PROMPT);
}

export { EXIT };
