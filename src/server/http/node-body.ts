// The body reader of a node request: protocol's one reader over its IncomingMessage.
import type { IncomingMessage } from 'node:http';
import { readBody } from '../../protocol/index.js';
import type { BodyReader } from './wire.js';

/** The BodyReader of one node request. A larger body is drained without being kept. */
export function nodeBodyReader(req: IncomingMessage): BodyReader {
  return (limit, onBody, tooLarge) => readBody(req, limit, onBody, tooLarge);
}
