// Drives a multi-round call the way a correct client does, answering each input request with a callback.
import { type McpReply, mcp } from '../helpers/mcp-http.js';

export interface Asked {
  round: number;
  key: string;
  request: { method: string; params: Record<string, unknown> };
}

export async function drive(
  url: string,
  method: 'tools/call' | 'prompts/get' | 'resources/read',
  params: Record<string, unknown>,
  answer: (asked: Asked) => unknown,
  maxRounds = 12,
): Promise<{ reply: McpReply; rounds: number; asked: Asked[] }> {
  const asked: Asked[] = [];
  let extra: Record<string, unknown> = {};
  for (let round = 1; round <= maxRounds; round++) {
    const reply = await mcp(url, method, { ...params, ...extra });
    const result = reply.response.result;
    if (result?.resultType !== 'input_required') return { reply, rounds: round, asked };
    const requests = (result.inputRequests ?? {}) as Record<string, Asked['request']>;
    const inputResponses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(requests)) {
      const a = { round, key, request };
      asked.push(a);
      inputResponses[key] = answer(a);
    }
    extra = { inputResponses, ...(result.requestState ? { requestState: result.requestState } : {}) };
  }
  throw new Error('flow did not finish');
}

export const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });
