// Redaction of a stream of text that arrives in pieces (a child's output, a patch git prints):
// CONTRACT §9's secret values replaced by `***` even when a secret is split across pieces.
import { REDACTED } from "../base/text-limits.js";

/**
 * Replaces secrets by `***` in a stream of text that arrives in pieces. A secret may be split
 * across pieces, so the end of the text that could still be the start of a secret is held back
 * until the next piece (or the end); everything else flows through at once.
 */
export class StreamRedactor {
  private readonly secrets: string[];
  private pending = "";

  constructor(secrets: readonly string[]) {
    // Longest first, so that a secret containing another one is replaced whole.
    this.secrets = [...new Set(secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
  }

  /** Takes the next piece; returns the redacted text that can no longer be part of a secret. */
  push(text: string): string {
    if (this.secrets.length === 0) return text;
    this.pending += text;
    const { done, rest } = this.scan(this.pending, this.pending.length - this.unfinished(this.pending));
    this.pending = rest;
    return done;
  }

  /** Returns whatever is held back, redacted. */
  end(): string {
    const { done } = this.scan(this.pending, this.pending.length);
    this.pending = "";
    return done;
  }

  /** Length of the longest end of `text` that is the beginning (not the whole) of a secret. */
  private unfinished(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }

  /**
   * Redacts `text` up to `limit`. Every secret starting before `limit` is complete (an incomplete
   * one would be an end of `text` longer than the held-back part), so it is replaced whole even
   * when it reaches past `limit`.
   */
  private scan(text: string, limit: number): { done: string; rest: string } {
    let done = "";
    let position = 0;
    while (position < limit) {
      let matchAt = -1;
      let matchLength = 0;
      for (const secret of this.secrets) {
        const at = text.indexOf(secret, position);
        if (at !== -1 && (matchAt === -1 || at < matchAt)) {
          matchAt = at;
          matchLength = secret.length;
        }
      }
      if (matchAt === -1 || matchAt >= limit) {
        done += text.slice(position, limit);
        position = limit;
        break;
      }
      done += text.slice(position, matchAt) + REDACTED;
      position = matchAt + matchLength;
    }
    return { done, rest: text.slice(position) };
  }
}
