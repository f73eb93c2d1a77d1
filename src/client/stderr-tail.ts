// The last lines a stdio server wrote to stderr, kept in a bounded buffer so an exit can say why it happened.

export class StderrTail {
  private text = '';
  constructor(
    private readonly maxLines = 20,
    private readonly maxChars = 4096,
  ) {}

  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    // Bounded whatever the server writes: keep only the end.
    if (this.text.length > this.maxChars * 2) this.text = this.text.slice(-this.maxChars);
  }

  /** The last lines (at most maxLines, maxChars), or [] when the server wrote nothing. */
  lines(): string[] {
    const lines = this.text.slice(-this.maxChars).split(/\r?\n/);
    while (lines.length > 0 && lines[lines.length - 1]?.trim() === '') lines.pop();
    return lines.slice(-this.maxLines);
  }
}
