// The full-screen view of `runner watch` on a terminal, drawn with terminal-kit (loaded only here, from
// node_modules: its modules are required by computed names, so it is not bundled): the alternate
// screen, keys read raw, the terminal's size and its changes, and a screen buffer drawn as the cells
// that changed since the last frame. Colour only where the style allows it (NO_COLOR: none at all).
import type { Terminal, ScreenBuffer as ScreenBufferType } from "terminal-kit";
import { displayWidth } from "../display-width.js";
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

const TONES: Record<Tone, Attributes> = {
  passed: { color: "green" },
  failed: { color: "red" },
  warning: { color: "yellow" },
  dim: { dim: true },
  strong: { bold: true },
};

export async function openScreen(options: { colour: boolean; onKey: (name: string) => void; onResize: () => void }): Promise<Screen> {
  const termkit = (await import("terminal-kit")).default;
  const term: Terminal = termkit.terminal;
  let buffer = new termkit.ScreenBuffer({ dst: term, width: term.width, height: term.height });
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
      if (closed) return;
      buffer.fill({ char: " ", attr: {} });
      lines.forEach((line, y) => {
        if (y >= buffer.height) return;
        let x = 0;
        for (const segment of line) {
          if (x >= buffer.width) break;
          const attr = options.colour && segment.tone !== undefined ? TONES[segment.tone] : {};
          buffer.put({ x, y, attr, wrap: false, dx: 1, dy: 0 }, segment.text);
          x += displayWidth(segment.text);
        }
      });
      buffer.draw({ delta: true });
    },
    close() {
      process.off("exit", close);
      close();
    },
  };
}
