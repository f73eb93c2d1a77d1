// The examples of docs/flows.md, each between region markers: a server with every tool the page shows.
// #region resolve-bug
import { elicitationForm } from 'mrtr/flow';
import { McpServer, text } from 'mrtr/server';
import { z } from 'zod';

const server = new McpServer({ name: 'flows', version: '1.0.0' });

const Resolution = elicitationForm(z.object({ resolution: z.enum(['Fixed', 'Duplicate', "Won't fix"]) }));

server.tool({ name: 'resolve_bug', input: z.object({ id: z.number() }) }, async ({ id }, { ask }) => {
  const { resolution } = await ask.form(`How was bug ${id} resolved?`, Resolution);
  if (resolution === 'Duplicate') {
    const { original } = await ask.form('Duplicate of which bug?', z.object({ original: z.number().int() }));
    if (!(await ask.confirm(`Close ${id} as a duplicate of ${original}?`))) return text('Left open');
    return text(`Bug ${id} closed as a duplicate of ${original}`);
  }
  return text(`Bug ${id} resolved as ${resolution}`);
});
// #endregion

server.tool({ name: 'greet' }, async (_args, { ask }) => {
  // #region batching
  const [name, color] = await ask.all([ask.text('Your name?'), ask.choose('Colour?', ['red', 'blue'])]);
  // Promise.all works the same way: both calls are made before either is awaited.
  // #endregion
  return text(`Hello ${name}, ${color} it is`);
});

/** Stand-ins for the systems a real server would call. */
const tickets = { create: async (item: string) => ({ id: `T-${item.length}`, item }) };
const findRoom = async (day: string, size: string) => `${size} room on ${day}`;

server.tool({ name: 'file_ticket', input: z.object({ item: z.string() }) }, async ({ item }, { ask }) => {
  // #region step
  const ticket = await ask.step('create-ticket', () => tickets.create(item)); // runs once; later rounds replay it
  // #endregion
  const notify = await ask.confirm(`Notify the owner of ${ticket.id}?`);
  return text(notify ? `${ticket.id} filed, owner notified` : `${ticket.id} filed`);
});

// #region share-report
server.tool(
  { name: 'share_report', input: z.object({ report: z.string() }) },
  async ({ report }, { ask }) => {
    const outcome = await ask.elicit(`Share ${report} with whom?`, z.object({ email: z.string().email() }));
    if (outcome.action !== 'accept') return text('Not shared.');
    const ok = await ask.confirm(`Send ${report} to ${outcome.content.email}?`, { humanRequired: 'consent' });
    return text(ok ? `Sent to ${outcome.content.email}` : 'Not shared.');
  },
);
// #endregion

// #region book-room
server.tool({ name: 'book_room' }, async (_args, { ask }) => {
  const [day, size] = await ask.all([
    ask.form('Which day?', z.object({ day: z.iso.date() })),
    ask.choose('Room size?', ['small', 'large']),
  ]); // round 1 asks both
  const room = await findRoom(day.day, size);
  if (!(await ask.confirm(`Book ${room}?`))) return text('Nothing booked'); // round 2
  return text(`Booked ${room}`);
});
// #endregion

// #region summarise
server.tool({ name: 'summarise' }, async (_args, { ask }) => {
  if (ask.supports('sampling')) {
    const answer = await ask.sample({
      messages: [{ role: 'user', content: { type: 'text', text: 'Summarise…' } }],
      maxTokens: 200,
    });
    return text(String((answer.content as { text?: string }).text));
  }
  return text(await ask.text('Please summarise the document in one line'));
});

// #endregion

/** A stand-in for an upstream MCP server mrtr did not write: it asks where to deploy, then deploys. */
const deployService = {
  async call(
    answers: Record<string, unknown>,
  ): Promise<{ inputRequests: import('mrtr/protocol').InputRequests } | { done: string }> {
    const where = answers.where as import('mrtr/protocol').ElicitResult | undefined;
    if (where?.action === 'accept') return { done: `Deployed to ${String(where.content?.env)}` };
    if (where) return { done: 'Not deployed' };
    const requestedSchema = {
      type: 'object' as const,
      properties: { env: { type: 'string', enum: ['staging', 'prod'] } },
    };
    return {
      inputRequests: {
        where: { method: 'elicitation/create', params: { message: 'Where to?', requestedSchema } },
      },
    };
  },
};

// #region forward
server.tool({ name: 'deploy' }, async (_args, { ask }) => {
  if (!(await ask.confirm('Let the deploy service ask you its questions?', { humanRequired: 'consent' })))
    return text('Nothing sent upstream');
  const answers: Record<string, unknown> = {};
  for (;;) {
    const reply = await deployService.call(answers);
    if ('done' in reply) return text(reply.done);
    // The upstream's questions go to our caller together, each under a key of ours; its own key maps the answer back.
    const relayed = await Promise.all(
      Object.entries(reply.inputRequests).map(
        async ([key, request]) => [key, await ask.forward(request)] as const,
      ),
    );
    for (const [key, answer] of relayed) answers[key] = answer;
  }
});

// #endregion

/** For test/docs/examples-run.test.ts, which calls these tools. */
export { server };
