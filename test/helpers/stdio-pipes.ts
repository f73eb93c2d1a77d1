// In-process stdio for serveStdio: write lines to `input`, read every JSON message the server wrote in `messages`.
import { PassThrough } from 'node:stream';

export function stdioPipes() {
  const input = new PassThrough();
  const output = new PassThrough();
  const messages: Array<Record<string, unknown>> = [];
  let buffered = '';
  output.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      messages.push(JSON.parse(buffered.slice(0, i)) as Record<string, unknown>);
      buffered = buffered.slice(i + 1);
    }
  });
  return { input, output, messages };
}
