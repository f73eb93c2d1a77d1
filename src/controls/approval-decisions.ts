// Recording a reviewer's decision, the one way every surface does it (the review page, the JSON API, the console):
// the vote goes to the book, and the decision — or the refusal — is told as a control event.
import {
  type ApprovalBook,
  type ApprovalRecord,
  ApprovalRefused,
  type Person,
  type Vote,
} from './approval-book.js';
import type { ControlEvent } from './context.js';

export interface DecisionInput {
  decision: Vote['decision'];
  comment: string;
  /** Digest of what the reviewer was shown. */
  seen: string;
  /** The effect the reviewer decided on: a vote for another one is refused. */
  effectDigest?: string;
}

export class ApprovalDecisions {
  constructor(
    private readonly book: ApprovalBook,
    private readonly onEvent: (event: ControlEvent) => void,
    private readonly now: () => number,
  ) {}

  /** Record `by`'s vote; throws ApprovalRefused (told as `vote_refused`) when it may not count. */
  async vote(
    id: string,
    by: Person,
    roles: readonly string[],
    input: DecisionInput,
    via: string,
  ): Promise<ApprovalRecord> {
    try {
      const next = await this.book.vote(id, by, roles, input);
      this.onEvent({
        control: 'approval',
        action: input.decision,
        id: next.id,
        by: by.subject,
        at: new Date(this.now()).toISOString(),
        detail: {
          comment: input.comment,
          via,
          state: next.state,
          effectDigest: next.effectDigest,
          requester: next.requester.subject,
        },
      });
      return next;
    } catch (error) {
      if (error instanceof ApprovalRefused) this.refused(id, by, error, via);
      throw error;
    }
  }

  /** Tell of a vote that was not recorded, and why. */
  refused(id: string, by: Person, error: ApprovalRefused, via: string): void {
    this.onEvent({
      control: 'approval',
      action: 'vote_refused',
      id,
      by: by.subject,
      at: new Date(this.now()).toISOString(),
      detail: { reason: error.reason, via },
    });
  }
}
