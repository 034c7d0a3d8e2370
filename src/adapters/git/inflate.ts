// Inflating many small zlib streams of known size (the object store: one per object of a pack it
// reads, ~1,000 in the audit of a 1,000-iteration run). `zlib.inflateSync` builds a whole stream
// object for each call (a Transform with its state, a native handle, zlib's own state) and closes
// it after; here one native handle is kept and reset between streams, as zlib is meant to be used.
// It is the handle Node's own synchronous zlib drives (`_handle.writeSync` with `_writeState`), not
// a documented API: where it is not there as expected, where a stream fails, or where the output is
// not exactly the size asked for, the answer comes from `inflateSync` — the same bytes, or the same
// error — so this can make a read faster and never change what it returns.
import zlib from "node:zlib";

interface NativeHandle {
  reset(): void;
  writeSync(flush: number, input: Buffer, inOffset: number, inLength: number, out: Buffer, outOffset: number, outLength: number): void;
}

interface Kept {
  stream: zlib.Inflate;
  handle: NativeHandle;
  /** After each write: [output space left, input left]. */
  state: Uint32Array;
}

/** undefined: not made yet; null: this Node does not have the handle as expected. */
let kept: Kept | null | undefined;

function keptInflater(): Kept | null {
  if (kept !== undefined) return kept;
  try {
    const stream = zlib.createInflate();
    // (a failed stream is destroyed with an "error" event, which nothing else would listen to)
    stream.on("error", () => undefined);
    const inner = stream as unknown as { _handle?: Partial<NativeHandle>; _writeState?: unknown };
    const handle = inner._handle;
    const state = inner._writeState;
    kept =
      handle && typeof handle.reset === "function" && typeof handle.writeSync === "function" && state instanceof Uint32Array && state.length >= 2
        ? { stream, handle: handle as NativeHandle, state }
        : null;
  } catch {
    kept = null;
  }
  return kept;
}

/** Whether the kept stream still has its handle open (zlib closes both on an error; a closed handle must never be written). */
function isOpen(inflater: Kept): boolean {
  return !inflater.stream.destroyed && (inflater.stream as unknown as { _handle?: unknown })._handle === inflater.handle;
}

/** The kept handle's inflation of `input`, when it is exactly `size` bytes; undefined: ask inflateSync. */
function inflateKept(input: Buffer, size: number): Buffer | undefined {
  let inflater = keptInflater();
  if (inflater !== null && !isOpen(inflater)) {
    kept = undefined;
    inflater = keptInflater();
  }
  if (inflater === null || !isOpen(inflater)) return undefined;
  try {
    inflater.handle.reset();
    // One byte more than expected: a stream that holds more than `size` bytes does not fit.
    const out = Buffer.allocUnsafe(size + 1);
    inflater.handle.writeSync(zlib.constants.Z_FINISH, input, 0, input.length, out, 0, out.length);
    if (!isOpen(inflater)) {
      // (zlib reported an error: the stream and its handle are closed; a new one next time)
      kept = undefined;
      return undefined;
    }
    // With Z_FINISH, zlib either ends the stream or reports an error (which closes the stream): the
    // stream ended, and holds exactly `size` bytes when one byte of room is left.
    return inflater.state[0] === 1 ? out.subarray(0, size) : undefined;
  } catch {
    kept = undefined;
    return undefined;
  }
}

/** Whether the last inflateOfSize was answered by the kept handle (for the tests: the fast way must not fall silent). */
let lastKept = false;
export function reusesHandle(): boolean {
  return lastKept;
}

/** The inflated bytes of the zlib stream `input`, which should hold `size` bytes (what `inflateSync` returns for it). */
export function inflateOfSize(input: Buffer, size: number): Buffer {
  // (a size past 16 MiB, which a damaged or planted header may claim, is not allocated up front)
  const small = size < 16 * 1024 * 1024;
  const fast = small ? inflateKept(input, size) : undefined;
  lastKept = fast !== undefined;
  return fast ?? zlib.inflateSync(input, small ? { chunkSize: Math.max(64, size + 1) } : {});
}
