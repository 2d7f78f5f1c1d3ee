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
 * - a name is set once: servers that repeat it on every piece (Fireworks) or send "" later (GLM) change nothing;
 * - any `index` may open a call: gateways in front of Claude (Bedrock proxies) pass the content-block index,
 *   so the first call comes at 1 (after a text block) and calls with text between them skip numbers.
 * An `index` that skips ahead to a piece that cannot open a call (neither an id nor a name: the call's
 * opening pieces were lost) is a protocol fault and ends the step with an error.
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
    const ordinal = this.ordinalOf(delta.index ?? undefined, id, Boolean(delta.function?.name));
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

  private ordinalOf(index: number | undefined, id: string | undefined, opensCall: boolean): number {
    if (index === undefined) {
      if (id !== undefined && this.byId.has(id)) return this.byId.get(id)!;
      if (id === undefined && this.calls.length) return this.calls.length - 1;
      return this.open(id);
    }
    const known = this.byIndex.get(index);
    if (known !== undefined && !(id && this.calls[known].id && this.calls[known].id !== id)) return known;
    if (known === undefined && index > this.highestIndex + 1 && !id && !opensCall) {
      const from = this.highestIndex < 0 ? "the start" : String(this.highestIndex);
      throw new ProviderError(
        `The provider's tool-call index jumped from ${from} to ${index} on a piece with no id or name: ` +
          "the call's first pieces were lost.",
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
