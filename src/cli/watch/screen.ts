// The full-screen view of `runner watch` on a terminal, drawn with terminal-kit (loaded only here, from
// node_modules: its modules are required by computed names, so it is not bundled): the alternate
// screen, keys read raw, the terminal's size and its changes, and a screen buffer drawn as the cells
// that changed since the last frame. Colour only where the style allows it (NO_COLOR: none at all).
import type { Rect, ScreenBuffer as ScreenBufferType, Terminal } from "terminal-kit";
import { displayWidth } from "../display-width.js";
import { importExternal } from "../../external-import.js";
import type { Tone } from "../style.js";
import type { FrameLine } from "./frame.js";

export interface Screen {
  readonly width: number;
  readonly height: number;
  draw(lines: readonly FrameLine[]): void;
  /** Gives the terminal back as it was (the normal screen, the cursor, cooked input). */
  close(): void;
}

type Attributes = ScreenBufferType.Attributes;
/** What of terminal-kit the drawer uses. */
type TerminalKit = { Rect: typeof Rect };

const TONES: Record<Tone, Attributes> = {
  passed: { color: "green" },
  failed: { color: "red" },
  warning: { color: "yellow" },
  dim: { dim: true },
  strong: { bold: true },
};

/** More rows changed than this: the whole buffer is drawn at once (cheaper than row by row). */
const FEW_ROWS = 8;

/** Puts one line into row `y` of the screen buffer; `blank`: blanks after it to the end of the row. */
function paintRow(buffer: ScreenBufferType, y: number, line: FrameLine, colour: boolean, blank: boolean): void {
  let x = 0;
  for (const segment of line) {
    if (x >= buffer.width) break;
    const attr = colour && segment.tone !== undefined ? TONES[segment.tone] : {};
    buffer.put({ x, y, attr, wrap: false, dx: 1, dy: 0 }, segment.text);
    x += displayWidth(segment.text);
  }
  if (blank && x < buffer.width) buffer.put({ x, y, attr: {}, wrap: false, dx: 1, dy: 0 }, " ".repeat(buffer.width - x));
}

/** Puts a frame's lines into the screen buffer, blank first. */
function paint(buffer: ScreenBufferType, lines: readonly FrameLine[], colour: boolean): void {
  buffer.fill({ char: " ", attr: {} });
  for (let y = 0; y < buffer.height; y++) paintRow(buffer, y, lines[y] ?? [], colour, false);
}

/** What a line looks like, to tell whether its row must be drawn again. */
function lineKey(line: FrameLine | undefined): string {
  return (line ?? []).map((segment) => `${segment.tone ?? ""}\u0000${segment.text}`).join("\u0001");
}

/**
 * Draws frames into `buffer` and on to its terminal. Most frames differ from the last in a few rows
 * (a clock, a state): only those are put and drawn (terminal-kit sends the cells that changed);
 * after a commit or a resize, the whole buffer.
 */
export function frameDrawer(termkit: TerminalKit, buffer: ScreenBufferType, colour: boolean): (lines: readonly FrameLine[]) => void {
  let drawn: string[] = [];
  return (lines) => {
    const keys = Array.from({ length: buffer.height }, (_, y) => lineKey(lines[y]));
    const changed = keys.flatMap((key, y) => (key === drawn[y] ? [] : [y]));
    if (changed.length > FEW_ROWS || drawn.length !== keys.length) {
      paint(buffer, lines, colour);
      // Every cell written: cheaper than comparing 12,000 cells with the last frame when most changed.
      buffer.draw({ delta: false });
    } else {
      for (const y of changed) {
        paintRow(buffer, y, lines[y] ?? [], colour, true);
        buffer.draw({ delta: true, srcClipRect: new termkit.Rect({ xmin: 0, xmax: buffer.width - 1, ymin: y, ymax: y }) });
      }
    }
    drawn = keys;
  };
}

export async function openScreen(options: { colour: boolean; onKey: (name: string) => void; onResize: () => void }): Promise<Screen> {
  const termkit = (await importExternal("terminal-kit", () => import("terminal-kit"))).default;
  const term: Terminal = termkit.terminal;
  let buffer = new termkit.ScreenBuffer({ dst: term, width: term.width, height: term.height });
  let drawFrame = frameDrawer(termkit, buffer, options.colour);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    term.grabInput(false);
    term.styleReset();
    term.hideCursor(false);
    term.fullscreen(false);
  };
  // However the process ends, the terminal is given back.
  process.once("exit", close);
  term.fullscreen(true);
  term.hideCursor(true);
  term.grabInput(true);
  term.on("key", (name: string) => options.onKey(name));
  term.on("resize", (width: number, height: number) => {
    buffer = new termkit.ScreenBuffer({ dst: term, width, height });
    drawFrame = frameDrawer(termkit, buffer, options.colour);
    options.onResize();
  });
  return {
    get width() {
      return buffer.width;
    },
    get height() {
      return buffer.height;
    },
    draw(lines) {
      if (!closed) drawFrame(lines);
    },
    close() {
      process.off("exit", close);
      close();
    },
  };
}
