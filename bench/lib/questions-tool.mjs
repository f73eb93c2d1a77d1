// The `ask_questions` tool of the curves bench (lib/curves.mjs): n yes/no questions asked one after another with
// `ctx.ask.confirm`, so a flow takes n + 1 rounds. The handler re-runs from the top every round and each earlier
// answer comes back from the journal sealed in requestState: round k replays the k − 1 answers before it, a flow of
// n questions n(n + 1)/2 in all. That is the cost this tool makes visible.
//
// lib/ours-server.mjs registers it beside approve_change when started with --questions-tool, so every option of that
// server (--auth, --store, --audit, --root) applies to it too. `z` and `text` come from the server's own checkout.

/** The most questions one flow may ask here: above the sweep's largest point (40), so the sweep never hits it. */
export const MAX_QUESTIONS = 64;

export function addQuestionsTool(server, { z, text }) {
  return server.tool(
    {
      name: 'ask_questions',
      description: 'Asks n yes/no questions in a row, then answers with their count',
      input: z.object({ n: z.number().int().min(1).max(MAX_QUESTIONS), run: z.string() }),
      // The server's default (10 rounds) is for real clarification flows; this tool asks up to MAX_QUESTIONS.
      maxRounds: MAX_QUESTIONS,
    },
    async ({ n, run }, ctx) => {
      for (let i = 1; i <= n; i++) {
        // `run` differs for every flow, so no two flows ask the same question (nothing can be cached by digest).
        if (!(await ctx.ask.confirm(`Question ${i} of ${n} for ${run}?`)))
          return text(`declined ${i} ${run}`);
      }
      return text(`confirmed ${n} ${run}`);
    },
  );
}
