// The object store's inflater (src/adapters/git/inflate.ts): one zlib handle kept and reset between
// streams must answer exactly what zlib.inflateSync answers — the same bytes, or an error where
// inflateSync throws — for whole, damaged, cut and mislabelled streams, in any order.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { deflateSync, inflateSync } from "node:zlib";
import { inflateOfSize, reusesHandle } from "../../src/adapters/git/inflate.js";

type Answer = { bytes: string } | { error: true };

function answer(run: () => Buffer): Answer {
  try {
    return { bytes: run().toString("hex") };
  } catch {
    return { error: true };
  }
}

/** A zlib stream of `data`, possibly damaged: a byte changed, cut short, or with bytes after its end. */
const stream = fc.record({
  data: fc.uint8Array({ maxLength: 3000 }).map((bytes) => Buffer.from(bytes)),
  repeat: fc.integer({ min: 1, max: 40 }),
  damage: fc.oneof(
    fc.constant({ kind: "none" as const }),
    fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), value: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
    fc.record({ kind: fc.constant("tail" as const), extra: fc.uint8Array({ minLength: 1, maxLength: 20 }) }),
  ),
  sizeOffset: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: -3, max: 3 })),
});

function build({
  data,
  repeat,
  damage,
}: {
  data: Buffer;
  repeat: number;
  damage: { kind: string; at?: number; value?: number; extra?: Uint8Array };
}) {
  const plain = Buffer.concat(Array.from({ length: repeat }, () => data));
  let input = deflateSync(plain);
  if (damage.kind === "flip") {
    input = Buffer.from(input);
    const at = damage.at! % input.length;
    input[at] = input[at]! ^ damage.value!;
  } else if (damage.kind === "cut") input = input.subarray(0, damage.at! % input.length);
  else if (damage.kind === "tail") input = Buffer.concat([input, Buffer.from(damage.extra!)]);
  return { plain, input };
}

describe("inflateOfSize", () => {
  it("answers what inflateSync answers, stream after stream, damaged or not", () => {
    fc.assert(
      fc.property(fc.array(stream, { minLength: 1, maxLength: 12 }), (streams) => {
        for (const s of streams) {
          const { plain, input } = build(s);
          const size = Math.max(0, plain.length + s.sizeOffset);
          expect(answer(() => inflateOfSize(input, size))).toEqual(answer(() => inflateSync(input)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps one zlib handle on this Node, and a new one after a stream that fails", () => {
    const good = deflateSync(Buffer.from("a version of the tree file\n".repeat(50)));
    expect(inflateOfSize(good, 27 * 50).toString()).toBe("a version of the tree file\n".repeat(50));
    expect(reusesHandle()).toBe(true);
    expect(() => inflateOfSize(Buffer.from("not a zlib stream"), 10)).toThrow();
    expect(inflateOfSize(good, 27 * 50).toString()).toBe("a version of the tree file\n".repeat(50));
    expect(reusesHandle()).toBe(true);
  });
});
