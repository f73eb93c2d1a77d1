// The answer for a round (or a completion) still running when its time limit passed.
import { ErrorCode, type JsonRpcRequest, McpError, type Result } from '../../protocol/index.js';
import type { Logger, RequestEnvironment } from '../environment.js';

export function timedOutAnswer(
  method: string,
  target: string,
  timeoutMs: number,
  request: JsonRpcRequest,
  env: RequestEnvironment,
  logger: Logger,
): Result {
  // A request the client already gave up on is nobody's timeout: its answer is dropped by the transport.
  if (!env.signal.aborted) logger.warn({ method, target, id: request.id, timeoutMs }, 'handler timed out');
  const message = `${target} did not finish within ${timeoutMs} ms`;
  // Like any tool failure, a tool's timeout is a result the model can read (server/tools.mdx "Error Handling").
  if (method === 'tools/call')
    return { resultType: 'complete', content: [{ type: 'text', text: message }], isError: true };
  throw new McpError(ErrorCode.InternalError, `Request timed out: ${message}`);
}
