// The body reader for node's IncomingMessage: the declared length is checked first, then the bytes as they come.
import type { IncomingMessage } from 'node:http';
import type { BodyReader } from './wire.js';

/** The BodyReader of one node request. A larger body is drained without being kept. */
export function nodeBodyReader(req: IncomingMessage): BodyReader {
  return (limit, onBody, tooLarge) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      tooLarge();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        req.resume();
        tooLarge();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      onBody((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8'));
    });
    req.on('error', () => {
      done = true;
    });
  };
}
