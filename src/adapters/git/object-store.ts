// Objects read straight from the repository's object files — loose ones and pack files — without a
// git process, for `runner audit` and `runner report`, which read a version of the tree file for
// every commit of a run: through `git cat-file --batch` a 1,000-iteration run over a 1,000-node plan
// moved 393 MB through a pipe (git inflating or rebuilding each version, the runner copying it
// out). Here a version stored as a delta against another (as git packs the versions of one file)
// is rebuilt from that version, kept in memory, at the cost of a copy.
//
// The same files git reads, read the way git reads them (gitformat-pack(5)), and trusted as much:
// git does not check an object's id when it reads it either. Anything this reader does not know —
// another repository format, alternates, an index version it does not read, a damaged file — and
// it answers "not here" (undefined), and the caller asks git.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import path from "node:path";
import { inflateSync } from "node:zlib";
import { PiecedBytes, type Piece } from "../../core/tree/pieced-bytes.js";
import { commonDir } from "./git-control.js";
import { inflateOfSize } from "./inflate.js";

const OBJECT_TYPES = ["", "commit", "tree", "blob", "tag"] as const;
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** Pieces an object rebuilt from deltas is kept in before it is copied into one buffer. */
const MAX_PIECES = 48;
/** Delta bases kept for the deltas after them, by the memory they hold (git's delta base cache is 96 MB). */
const CACHE_BYTES = 24 * 1024 * 1024;

interface Pack {
  fd: number;
  size: number;
  /** The index file: fan-out table, sorted ids, CRCs, offsets (version 2). */
  index: Buffer;
  count: number;
  /** Every object's offset, sorted: an object's data ends where the next begins (made when first needed). */
  sortedOffsets: Float64Array | undefined;
}

export class ObjectStore {
  private readonly cache = new Map<string, { type: string; bytes: PiecedBytes }>();
  private cached = 0;
  /**
   * The object read last (by its pack and offset), kept beside the cache: git packs the versions of a
   * file in either direction, and where the next version is a delta against this one (a run's tree
   * file read oldest first), its base is not read and inflated again.
   */
  private last: { key: string; object: { type: string; bytes: PiecedBytes } } | undefined;

  private constructor(
    private readonly objects: string,
    private readonly hashBytes: number,
    private readonly packs: Pack[],
  ) {}

  /**
   * The object store of the repository whose git folder is `gitDir` (a linked worktree's objects are
   * in its common folder), for ids of `hashBytes` bytes (20: SHA-1, 32: SHA-256); undefined when it
   * is not one this reader reads (then ask git).
   */
  static open(gitDir: string, hashBytes = 20): ObjectStore | undefined {
    try {
      const objects = path.join(commonDir(gitDir), "objects");
      if (existsSync(path.join(objects, "info", "alternates"))) return undefined;
      const packs: Pack[] = [];
      const packDir = path.join(objects, "pack");
      for (const name of existsSync(packDir) ? readdirSync(packDir) : []) {
        if (!name.endsWith(".idx")) continue;
        const pack = openPack(path.join(packDir, name));
        if (pack) packs.push(pack);
      }
      return new ObjectStore(objects, hashBytes, packs);
    } catch {
      return undefined;
    }
  }

  close(): void {
    for (const pack of this.packs) closeSync(pack.fd);
    this.packs.length = 0;
    this.cache.clear();
    this.last = undefined;
  }

  /**
   * The object's type and content, or undefined when it is not found here (or not read here: ask
   * git). An object stored as a delta is given as pieces of its base and of the delta, not copied.
   */
  read(id: string): { type: string; bytes: PiecedBytes } | undefined {
    try {
      return this.find(id);
    } catch {
      return undefined;
    }
  }

  /** A commit's parents (undefined: not read here). */
  parents(commit: string): string[] | undefined {
    const object = this.read(commit);
    if (object?.type !== "commit") return undefined;
    const head = object.bytes.toString(0, headerEnd(object.bytes));
    return [...head.matchAll(/^parent ([0-9a-f]+)$/gm)].map((match) => match[1]!);
  }

  /**
   * The file at `path` in `commit` (`<commit>:<path>`), as `git cat-file` names it: its bytes, "none"
   * when there is no file there, undefined when it is not read here.
   */
  fileAt(commit: string, file: string): PiecedBytes | "none" | undefined {
    const object = this.read(commit);
    if (object?.type !== "commit") return undefined;
    const tree = /^tree ([0-9a-f]+)$/m.exec(object.bytes.toString(0, headerEnd(object.bytes)))?.[1];
    let id = tree;
    for (const name of file.split("/")) {
      const folder = id === undefined ? undefined : this.read(id);
      if (folder?.type !== "tree") return folder === undefined ? undefined : "none";
      id = entryOf(folder.bytes.copy(), name, this.hashBytes);
      if (id === undefined) return "none";
    }
    const blob = id === undefined ? undefined : this.read(id);
    if (blob === undefined) return undefined;
    return blob.type === "blob" ? blob.bytes : "none";
  }

  private find(id: string): { type: string; bytes: PiecedBytes } | undefined {
    if (id.length !== this.hashBytes * 2 || !/^[0-9a-f]+$/.test(id)) return undefined;
    const key = Buffer.from(id, "hex");
    for (const pack of this.packs) {
      const offset = findOffset(pack, key, this.hashBytes);
      if (offset === undefined) continue;
      const object = this.readPacked(pack, offset, 0);
      this.last = { key: this.keyOf(pack, offset), object };
      return object;
    }
    return this.readLoose(id);
  }

  private readLoose(id: string): { type: string; bytes: PiecedBytes } | undefined {
    const file = path.join(this.objects, id.slice(0, 2), id.slice(2));
    if (!existsSync(file)) return undefined;
    const raw = inflateSync(readFileSync(file));
    const nul = raw.indexOf(0);
    const match = /^([a-z]+) ([0-9]+)$/.exec(raw.toString("latin1", 0, nul));
    if (!match || Number(match[2]) !== raw.length - nul - 1) throw new Error(`loose object ${id} is damaged`);
    return { type: match[1]!, bytes: PiecedBytes.of(raw.subarray(nul + 1)) };
  }

  /** The object at `offset` of `pack`, its deltas applied as pieces; the bases kept for the deltas after them. */
  private readPacked(pack: Pack, offset: number, depth: number): { type: string; bytes: PiecedBytes } {
    if (depth > 10_000) throw new Error("delta chain too long");
    const key = this.keyOf(pack, offset);
    const cached = this.cache.get(key) ?? (this.last?.key === key ? this.last.object : undefined);
    if (cached) return cached;
    // The object whole, header and data, in one read: it ends where the next object begins.
    const end = nextOffset(pack, offset, this.hashBytes);
    const head = Buffer.allocUnsafe(end - offset);
    if (readSync(pack.fd, head, 0, head.length, offset) !== head.length) throw new Error("pack file shorter than its index says");
    let at = 0;
    let byte = head[at++]!;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    for (let shift = 4; byte & 0x80; shift += 7) {
      byte = head[at++]!;
      size += (byte & 0x7f) * 2 ** shift;
    }
    let base: { type: string; bytes: PiecedBytes } | undefined;
    if (type === OFS_DELTA) {
      byte = head[at++]!;
      let distance = byte & 0x7f;
      while (byte & 0x80) {
        byte = head[at++]!;
        distance = (distance + 1) * 128 + (byte & 0x7f);
      }
      base = this.readPacked(pack, offset - distance, depth + 1);
      this.remember(this.keyOf(pack, offset - distance), base);
    } else if (type === REF_DELTA) {
      const baseId = head.toString("hex", at, at + this.hashBytes);
      at += this.hashBytes;
      base = this.find(baseId);
      if (!base) throw new Error(`delta base ${baseId} not found`);
    } else if (OBJECT_TYPES[type] === undefined || type === 0) {
      throw new Error(`unknown object type ${type}`);
    }
    // (its size is known: one output buffer of that size, not 16 KB pieces joined — a quarter faster)
    const data = inflateOfSize(head.subarray(at), size);
    if (data.length !== size) throw new Error("object size does not match its header");
    let object: { type: string; bytes: PiecedBytes };
    if (base === undefined) object = { type: OBJECT_TYPES[type]!, bytes: PiecedBytes.of(data) };
    else {
      const rebuilt = new PiecedBytes(deltaPieces(base.bytes, data));
      // Down a long chain of deltas the pieces multiply: past a few dozen, one copy costs less than walking them.
      object = { type: base.type, bytes: rebuilt.count > MAX_PIECES ? PiecedBytes.of(rebuilt.copy()) : rebuilt };
    }
    return object;
  }

  /** What names an object of a pack in the cache: the pack and the object's offset in it. */
  private keyOf(pack: Pack, offset: number): string {
    return `${this.packs.indexOf(pack)}:${offset}`;
  }

  /** Keeps a base for the deltas after it, the oldest let go beyond CACHE_BYTES (counting what it holds on its own). */
  private remember(key: string, object: { type: string; bytes: PiecedBytes }): void {
    if (this.cache.has(key)) return;
    this.cache.set(key, object);
    this.cached += object.bytes.held;
    for (const [oldKey, old] of this.cache) {
      if (this.cached <= CACHE_BYTES) break;
      this.cache.delete(oldKey);
      this.cached -= old.bytes.held;
    }
  }
}

/** Where a commit's header ends (the blank line before its message). */
function headerEnd(bytes: PiecedBytes): number {
  for (let at = bytes.indexOf(10, 0); at >= 0; at = bytes.indexOf(10, at + 1)) if (bytes.at(at + 1) === 10) return at;
  return bytes.length;
}

/** The id of the entry `name` of a tree object (`<mode> <name>\0<id>` after one another), or undefined. */
function entryOf(tree: Buffer, name: string, hashBytes: number): string | undefined {
  for (let at = 0; at < tree.length; ) {
    const space = tree.indexOf(32, at);
    const nul = tree.indexOf(0, space);
    if (space < 0 || nul < 0) return undefined;
    if (tree.toString("utf8", space + 1, nul) === name) return tree.toString("hex", nul + 1, nul + 1 + hashBytes);
    at = nul + 1 + hashBytes;
  }
  return undefined;
}

/** A pack's index (version 2) and its pack file, or undefined when it is not one this reader reads. */
function openPack(indexFile: string): Pack | undefined {
  const packFile = indexFile.replace(/\.idx$/, ".pack");
  if (!existsSync(packFile)) return undefined;
  const index = readFileSync(indexFile);
  if (index.length < 8 + 1024 || index.readUInt32BE(0) !== 0xff744f63 || index.readUInt32BE(4) !== 2) return undefined;
  const count = index.readUInt32BE(8 + 255 * 4);
  const fd = openSync(packFile, "r");
  const size = fstatSync(fd).size;
  const header = Buffer.alloc(12);
  readSync(fd, header, 0, 12, 0);
  if (header.toString("latin1", 0, 4) !== "PACK" || header.readUInt32BE(8) !== count) {
    closeSync(fd);
    return undefined;
  }
  return { fd, size, index, count, sortedOffsets: undefined };
}

/** The offset of the index's `i`-th object (large offsets in the 64-bit table). */
function offsetAt(pack: Pack, i: number, hashBytes: number): number {
  const offsets = 8 + 1024 + pack.count * (hashBytes + 4);
  const small = pack.index.readUInt32BE(offsets + i * 4);
  if (!(small & 0x80000000)) return small;
  const large = offsets + pack.count * 4 + (small & 0x7fffffff) * 8;
  return Number(pack.index.readBigUInt64BE(large));
}

/** Where the object with id `key` is in the pack, or undefined. */
function findOffset(pack: Pack, key: Buffer, hashBytes: number): number | undefined {
  const first = key[0]!;
  let low = first === 0 ? 0 : pack.index.readUInt32BE(8 + (first - 1) * 4);
  let high = pack.index.readUInt32BE(8 + first * 4);
  const ids = 8 + 1024;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const order = pack.index.compare(key, 0, hashBytes, ids + mid * hashBytes, ids + (mid + 1) * hashBytes);
    if (order === 0) return offsetAt(pack, mid, hashBytes);
    if (order < 0) low = mid + 1;
    else high = mid;
  }
  return undefined;
}

/** Where the object after the one at `offset` begins (the pack's trailing checksum after the last). */
function nextOffset(pack: Pack, offset: number, hashBytes: number): number {
  if (pack.sortedOffsets === undefined) {
    const offsets = new Float64Array(pack.count);
    for (let i = 0; i < pack.count; i++) offsets[i] = offsetAt(pack, i, hashBytes);
    pack.sortedOffsets = offsets.sort();
  }
  const offsets = pack.sortedOffsets;
  let low = 0;
  let high = offsets.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (offsets[mid]! <= offset) low = mid + 1;
    else high = mid;
  }
  return low < offsets.length ? offsets[low]! : pack.size - hashBytes;
}

/** The object a delta makes of its base, as pieces: stretches of the base and new bytes (gitformat-pack(5)). */
function deltaPieces(base: PiecedBytes, delta: Buffer): Piece[] {
  let at = 0;
  const varint = () => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = delta[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  if (varint() !== base.length) throw new Error("delta base size does not match");
  const size = varint();
  const pieces: Piece[] = [];
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let from = 0;
      let length = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) from += delta[at++]! * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (16 << bit)) length += delta[at++]! * 2 ** (8 * bit);
      if (length === 0) length = 0x10000;
      if (from + length > base.length || written + length > size) throw new Error("delta copies out of bounds");
      pieces.push(...base.piecesOf(from, from + length));
      written += length;
    } else if (op > 0) {
      if (at + op > delta.length || written + op > size) throw new Error("delta inserts out of bounds");
      pieces.push({ buffer: delta, start: at, end: at + op });
      written += op;
      at += op;
    } else {
      throw new Error("delta holds a reserved instruction");
    }
  }
  if (written !== size) throw new Error("delta result size does not match");
  return pieces;
}
