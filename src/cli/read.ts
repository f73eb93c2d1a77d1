// `mrtr read <url> <uri>`: read a resource through all its input rounds, like `mrtr call` does for a tool.
import { isJsonObject, type JsonObject } from '../protocol/index.js';
import { type MrtrCommand, mrtrCommand } from './call.js';
import { printQuoted } from './show-result.js';
import { writeData } from './terminal/print.js';

export const READ_USAGE = `usage: mrtr read <url> <uri> [--answers JSON] [--token T] [--json] [--max-rounds N] [--timeout SECONDS]
       mrtr read --stdio <uri> [options] [--env NAME[=VALUE]]… -- <command> [args…]

  Reads the resource (resources/read), answering its questions as mrtr call does (see mrtr call --help).
  Prints text contents as they are, and a line per binary content. Exit codes as for mrtr call.
`;

function printContents(result: JsonObject, stream: NodeJS.WriteStream): { pruned: boolean } {
  const emit = (text: string) => (stream.isTTY ? printQuoted(stream, text) : writeData(stream, `${text}\n`));
  for (const c of Array.isArray(result.contents) ? result.contents : []) {
    if (!isJsonObject(c)) continue;
    if (typeof c.text === 'string') emit(c.text);
    else if (typeof c.blob === 'string')
      emit(
        `[${String(c.mimeType ?? 'binary')} ${String(c.uri)}, ${Math.floor((c.blob.length * 3) / 4)} bytes]`,
      );
  }
  return { pruned: false };
}

export const READ: MrtrCommand = {
  name: 'read',
  usage: READ_USAGE,
  target: 'uri',
  takesArgs: false,
  run: (client, uri, _args, options) => client.readResource(uri, options),
  print: (result, stream) => printContents(result as JsonObject, stream),
};

export function readCommand(argv: string[]): Promise<number> {
  return mrtrCommand(argv, READ);
}
