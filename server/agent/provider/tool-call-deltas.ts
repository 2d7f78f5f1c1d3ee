import { ProviderError } from "../provider";
import type { ToolCallDelta } from "./chunk";

export interface ToolCallPiece {
  /** Our own ordinal for the call (0, 1, …), not the provider's `index`, which some reuse. */
  index: number;
  id?: string;
  name?: string;
  argsDelta: string;
}

/**
 * Tool-call deltas into calls. The provider's `index` says which call a piece continues, except:
 * - no `index` at all (Mistral): a piece with a new `id` is a new call, one without continues the last;
 * - the same `index` with a different `id` (servers that repeat a call): a new call, not a continuation,
 *   so names are never concatenated (`toolAtoolA`) and arguments never become `{}{}`;
 * - a name is set once: servers that repeat it on every piece (Fireworks) or send "" later (GLM) change nothing.
 * An `index` that skips ahead (0, then 5) is a protocol fault and ends the step with an error.
 */
export class ToolCallAssembler {
  private readonly calls: { id?: string; name?: string }[] = [];
  private readonly byIndex = new Map<number, number>();
  private readonly byId = new Map<string, number>();
  private highestIndex = -1;

  add(deltas: readonly ToolCallDelta[]): ToolCallPiece[] {
    return deltas.map((delta) => this.piece(delta));
  }

  private piece(delta: ToolCallDelta): ToolCallPiece {
    const id = delta.id || undefined;
    const ordinal = this.ordinalOf(delta.index ?? undefined, id);
    const call = this.calls[ordinal];
    const name = delta.function?.name || undefined;
    const piece: ToolCallPiece = { index: ordinal, argsDelta: delta.function?.arguments ?? "" };
    if (id && !call.id) {
      call.id = id;
      this.byId.set(id, ordinal);
      piece.id = id;
    }
    if (name && !call.name) {
      call.name = name;
      piece.name = name;
    }
    return piece;
  }

  private ordinalOf(index: number | undefined, id: string | undefined): number {
    if (index === undefined) {
      if (id !== undefined && this.byId.has(id)) return this.byId.get(id)!;
      if (id === undefined && this.calls.length) return this.calls.length - 1;
      return this.open(id);
    }
    const known = this.byIndex.get(index);
    if (known !== undefined && !(id && this.calls[known].id && this.calls[known].id !== id)) return known;
    if (known === undefined && index > this.highestIndex + 1) {
      throw new ProviderError(
        `The provider's tool-call index jumped from ${this.highestIndex} to ${index}: a call's pieces were lost.`,
        200,
        false,
        undefined,
        { kind: "malformed_stream" },
      );
    }
    this.highestIndex = Math.max(this.highestIndex, index);
    const ordinal = this.open(id);
    this.byIndex.set(index, ordinal);
    return ordinal;
  }

  private open(id: string | undefined): number {
    this.calls.push({});
    if (id) this.byId.set(id, this.calls.length - 1);
    return this.calls.length - 1;
  }
}
