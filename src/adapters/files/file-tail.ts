// Follows a file another process appends lines to (a run's events.jsonl), for `runner watch`: each
// read returns the lines completed since the last one. The file is in the agent's reach, so it is
// read as untrusted input: never through a link or from a FIFO, at most READ_BYTES a read (a file
// that grew by gigabytes is skipped to its end), lines longer than MAX_LINE dropped, and a file that
// shrank or was replaced read again from its start.
import { StringDecoder } from "node:string_decoder";
import { readAgentFileRange } from "./safe-files.js";

const READ_BYTES = 256 * 1024;
const MAX_LINE = 4096;

export class FileTail {
  private offset = 0;
  private partial = "";
  /** Whether the line being read began before a skip (it is dropped whole). */
  private skipping = false;
  private decoder = new StringDecoder("utf8");

  constructor(private readonly file: string) {}

  /** The lines completed since the last read (none when the file is missing or not a regular file). */
  read(): string[] {
    const probe = readAgentFileRange(this.file, this.offset, READ_BYTES);
    if (probe.kind !== "bytes") {
      this.restart(0);
      return [];
    }
    let { bytes } = probe;
    if (probe.size < this.offset) {
      // Shorter than what was read: a new file (or one cut back). Read from its start.
      this.restart(0);
      return this.read();
    }
    if (probe.size - this.offset > READ_BYTES) {
      // Far behind: only the end is read, from the first whole line in it.
      this.restart(probe.size - READ_BYTES);
      this.skipping = true;
      const end = readAgentFileRange(this.file, this.offset, READ_BYTES);
      if (end.kind !== "bytes") return [];
      bytes = end.bytes;
    }
    this.offset += bytes.length;
    const lines = (this.partial + this.decoder.write(bytes)).split("\n");
    this.partial = lines.pop() ?? "";
    if (this.partial.length > MAX_LINE) {
      this.partial = "";
      this.skipping = true;
    }
    if (this.skipping && lines.length > 0) {
      lines.shift();
      this.skipping = false;
    }
    return lines.filter((line) => line.length > 0 && line.length <= MAX_LINE);
  }

  private restart(offset: number): void {
    this.offset = offset;
    this.partial = "";
    this.skipping = false;
    this.decoder = new StringDecoder("utf8");
  }
}
