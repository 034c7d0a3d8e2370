// Bytes held as pieces of other buffers. A version of the tree file that git stores as a delta
// against another version (src/adapters/git/object-store.ts) is, piece by piece, stretches of that
// version and a few new bytes — down a chain of deltas, stretches of the one version stored whole.
// Kept that way, a version is never copied out, and two versions are not compared byte by byte
// where both hold the very same memory: on this machine copying 400 KB costs more than judging
// the change it holds.

export interface Piece {
  buffer: Buffer;
  start: number;
  end: number;
}

export class PiecedBytes {
  readonly length: number;
  /** Where each piece starts in these bytes. */
  private readonly starts: number[] = [];
  /** The piece the last byte asked for was in (reading goes line by line, mostly within one piece). */
  private last = 0;

  private readonly pieces: readonly Piece[];

  constructor(pieces: readonly Piece[]) {
    // (empty pieces left out; a piece that goes on where the one before ends in the same buffer, joined to it)
    const joined: Piece[] = [];
    for (const piece of pieces) {
      if (piece.end <= piece.start) continue;
      const last = joined[joined.length - 1];
      if (last?.buffer === piece.buffer && last.end === piece.start) joined[joined.length - 1] = { ...last, end: piece.end };
      else joined.push(piece);
    }
    this.pieces = joined;
    let length = 0;
    for (const piece of this.pieces) {
      this.starts.push(length);
      length += piece.end - piece.start;
    }
    this.length = length;
  }

  /** How many pieces. */
  get count(): number {
    return this.pieces.length;
  }

  /** The memory these bytes hold on their own: one buffer of their own, else (pieces of others') next to nothing. */
  get held(): number {
    return this.pieces.length === 1 ? this.pieces[0]!.buffer.length : this.pieces.length * 64;
  }

  static of(buffer: Buffer): PiecedBytes {
    return new PiecedBytes([{ buffer, start: 0, end: buffer.length }]);
  }

  /** The byte at `at` (undefined outside). */
  at(at: number): number | undefined {
    if (at < 0 || at >= this.length) return undefined;
    const piece = this.pieces[this.pieceOf(at)]!;
    return piece.buffer[piece.start + at - this.starts[this.last]!];
  }

  /** Where `byte` first is at or after `from`, or -1. */
  indexOf(byte: number, from: number): number {
    for (let i = this.pieceOf(Math.max(0, from)); i < this.pieces.length && from < this.length; i++) {
      const piece = this.pieces[i]!;
      const start = this.starts[i]!;
      const found = piece.buffer.subarray(piece.start, piece.end).indexOf(byte, Math.max(0, from - start));
      if (found >= 0) return start + found;
    }
    return -1;
  }

  /** Where `byte` last is at or before `from`, or -1. */
  lastIndexOf(byte: number, from: number): number {
    if (from < 0 || this.length === 0) return -1;
    for (let i = this.pieceOf(Math.min(from, this.length - 1)); i >= 0; i--) {
      const piece = this.pieces[i]!;
      const start = this.starts[i]!;
      const found = piece.buffer.subarray(piece.start, piece.end).lastIndexOf(byte, Math.min(from - start, piece.end - piece.start - 1));
      if (found >= 0) return start + found;
    }
    return -1;
  }

  /** Bytes [start, end) as UTF-8 text. */
  toString(start = 0, end = this.length): string {
    end = Math.min(end, this.length);
    if (start >= end) return "";
    const first = this.pieceOf(start);
    const piece = this.pieces[first]!;
    const offset = start - this.starts[first]!;
    if (end - start <= piece.end - piece.start - offset)
      return piece.buffer.toString("utf8", piece.start + offset, piece.start + offset + end - start);
    return this.copy(start, end).toString("utf8");
  }

  /** The pieces that hold bytes [start, end), cut to that range. */
  piecesOf(start: number, end: number): Piece[] {
    const out: Piece[] = [];
    if (start >= end) return out;
    for (let i = this.pieceOf(start); i < this.pieces.length && this.starts[i]! < end; i++) {
      const piece = this.pieces[i]!;
      const offset = this.starts[i]!;
      out.push({
        buffer: piece.buffer,
        start: piece.start + Math.max(0, start - offset),
        end: piece.start + Math.min(piece.end - piece.start, end - offset),
      });
    }
    return out;
  }

  /** Bytes [start, end) in one buffer of their own. */
  copy(start = 0, end = this.length): Buffer {
    const out = Buffer.allocUnsafe(Math.max(0, Math.min(end, this.length) - start));
    let written = 0;
    for (let i = this.pieceOf(start); written < out.length; i++) {
      const piece = this.pieces[i]!;
      const from = piece.start + Math.max(0, start - this.starts[i]!);
      const take = Math.min(piece.end - from, out.length - written);
      piece.buffer.copy(out, written, from, from + take);
      written += take;
    }
    return out;
  }

  /**
   * How many bytes at the start of `a` and `b` are the same. Stretches where both hold the same
   * memory are the same without a look at them.
   */
  static commonPrefix(a: PiecedBytes, b: PiecedBytes): number {
    const limit = Math.min(a.length, b.length);
    let at = 0;
    let i = 0;
    let j = 0;
    while (at < limit) {
      const pa = a.pieces[i]!;
      const pb = b.pieces[j]!;
      const fromA = pa.start + at - a.starts[i]!;
      const fromB = pb.start + at - b.starts[j]!;
      const n = Math.min(pa.end - fromA, pb.end - fromB, limit - at);
      const same =
        pa.buffer === pb.buffer && fromA === fromB
          ? n
          : matchingLength(n, (x, y) => pa.buffer.compare(pb.buffer, fromB + x, fromB + y, fromA + x, fromA + y) === 0);
      at += same;
      if (same < n) return at;
      if (fromA + n === pa.end) i++;
      if (fromB + n === pb.end) j++;
    }
    return at;
  }

  /** How many bytes at the end of `a` and `b` are the same, not counting into the first `prefix` bytes of either. */
  static commonSuffix(a: PiecedBytes, b: PiecedBytes, prefix: number): number {
    const limit = Math.min(a.length, b.length) - prefix;
    let back = 0;
    let i = a.pieces.length - 1;
    let j = b.pieces.length - 1;
    while (back < limit) {
      const pa = a.pieces[i]!;
      const pb = b.pieces[j]!;
      // The ends (exclusive) of the stretches still to compare, in each piece's buffer.
      const endA = pa.start + a.length - back - a.starts[i]!;
      const endB = pb.start + b.length - back - b.starts[j]!;
      const n = Math.min(endA - pa.start, endB - pb.start, limit - back);
      const same =
        pa.buffer === pb.buffer && endA === endB
          ? n
          : matchingLength(n, (x, y) => pa.buffer.compare(pb.buffer, endB - y, endB - x, endA - y, endA - x) === 0);
      back += same;
      if (same < n) return back;
      if (endA - n === pa.start) i--;
      if (endB - n === pb.start) j--;
    }
    return back;
  }

  /** The index of the piece holding byte `at` (0 ≤ at < length). */
  private pieceOf(at: number): number {
    const starts = this.starts;
    let i = this.last;
    if (at >= starts[i]! && (i + 1 >= starts.length || at < starts[i + 1]!)) return i;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (starts[mid]! <= at) low = mid;
      else high = mid - 1;
    }
    i = low;
    this.last = i;
    return i;
  }
}

/**
 * The length of the longest run [0, n) for which `same(0, n)` holds, given `same(from, to)` on
 * ranges: large blocks first, then halves of the block that differs (memcmp does the work).
 */
function matchingLength(length: number, same: (from: number, to: number) => boolean): number {
  let at = 0;
  const BLOCK = 16384;
  while (at + BLOCK <= length && same(at, at + BLOCK)) at += BLOCK;
  // The bytes before `at` are the same; the first difference, if any, is in [at, at + size).
  let size = Math.min(BLOCK, length - at);
  while (size > 64) {
    const half = size >> 1;
    if (same(at, at + half)) {
      at += half;
      size -= half;
    } else {
      size = half;
    }
  }
  while (at < length && same(at, at + 1)) at++;
  return at;
}
