// The tree file is written a piece at a time (so a 40 MB tree does not also need a 40 MB buffer):
// the bytes on disk must be exactly the UTF-8 of the whole text, wherever the cuts fall.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { textPieces, writeTreeBody, WRITE_CHUNK_CHARS } from "../../src/adapters/files/tree-store.js";

const dir = mkdtempSync(path.join(tmpdir(), "runner-tree-write-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writing the tree in pieces", () => {
  it("pieces encode, one by one, to the bytes of the whole text and its newline (any text, any piece size)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), fc.integer({ min: 1, max: 9 }), (text, size) => {
        const pieces = [...textPieces(text, size)];
        expect(pieces.join("")).toBe(`${text}\n`);
        expect(Buffer.concat(pieces.map((piece) => Buffer.from(piece, "utf8")))).toEqual(Buffer.from(`${text}\n`, "utf8"));
      }),
      { numRuns: 500 },
    );
  });

  it("never cuts a surrogate pair, even when the cut would fall inside one", () => {
    const text = `ab😀cd`; // the emoji is two UTF-16 units, at indexes 2 and 3
    expect([...textPieces(text, 3)]).toEqual(["ab😀", "cd", "\n"]);
  });

  it("writes a text longer than one piece, with characters outside the BMP across the cuts, byte for byte", async () => {
    const unit = '{"title": "été 😀 ok"},\n';
    const body = unit.repeat(Math.ceil((WRITE_CHUNK_CHARS * 2.5) / unit.length));
    const file = path.join(dir, "tree.json");
    await writeTreeBody(file, body);
    expect(readFileSync(file).equals(Buffer.from(`${body}\n`, "utf8"))).toBe(true);
  });
});
