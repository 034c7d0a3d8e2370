// A real pseudo-terminal for tests of full-screen commands (`runner watch`): the built binary runs in
// node-pty, its output is fed to a headless xterm (@xterm/headless), and the test reads the screen as
// a person would see it — text by rows, and each cell's colour and weight. Waits poll the screen
// until it shows what is expected, with a generous deadline (never a fixed sleep).
import xtermHeadless from "@xterm/headless";
import * as pty from "node-pty";
import { RUNNER_BIN } from "./sandbox.js";

const { Terminal } = xtermHeadless;

export interface PtyOptions {
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
}

export class PtyScreen {
  readonly exited: Promise<number>;
  private readonly term: InstanceType<typeof Terminal>;
  private readonly process: pty.IPty;
  /** Everything the program wrote, as written (escape codes included). */
  output = "";

  private constructor(args: readonly string[], options: PtyOptions) {
    this.term = new Terminal({ cols: options.cols, rows: options.rows, allowProposedApi: true, scrollback: 1000 });
    this.process = pty.spawn(process.execPath, [RUNNER_BIN, ...args], {
      name: "xterm-256color",
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: { ...options.env, TERM: "xterm-256color" },
    });
    this.process.onData((data) => {
      this.output += data;
      this.term.write(data);
    });
    this.exited = new Promise((resolve) => this.process.onExit(({ exitCode }) => resolve(exitCode)));
  }

  /** The built `runner` with `args` in a pseudo-terminal of `cols` × `rows`. */
  static runner(args: readonly string[], options: PtyOptions): PtyScreen {
    return new PtyScreen(args, options);
  }

  get pid(): number {
    return this.process.pid;
  }

  /** The screen's rows as text (the alternate screen while a full-screen program shows it), trailing spaces trimmed. */
  lines(): string[] {
    const buffer = this.term.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this.term.rows; y++) rows.push((buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "").trimEnd());
    return rows;
  }

  /** Every row of the normal screen's buffer, scrollback included (what stays once a full-screen program has left). */
  normalLines(): string[] {
    const buffer = this.term.buffer.normal;
    const rows: string[] = [];
    for (let y = 0; y < buffer.length; y++) rows.push((buffer.getLine(y)?.translateToString(true) ?? "").trimEnd());
    return rows;
  }

  /** Whether the alternate screen is shown. */
  get fullScreen(): boolean {
    return this.term.buffer.active.type === "alternate";
  }

  /** Whether any cell on the screen is drawn in colour or bold/dim (what NO_COLOR rules out). */
  styledCells(): number {
    const buffer = this.term.buffer.active;
    let styled = 0;
    for (let y = 0; y < this.term.rows; y++) {
      const line = buffer.getLine(buffer.viewportY + y);
      if (!line) continue;
      for (let x = 0; x < this.term.cols; x++) {
        const cell = line.getCell(x);
        if (!cell) continue;
        if (!cell.isFgDefault() || !cell.isBgDefault() || cell.isBold() || cell.isDim()) styled++;
      }
    }
    return styled;
  }

  /** The colour mode of the first cell of the first row holding `text` (for checks that something is coloured). */
  colourOf(text: string): { palette: number | undefined; bold: boolean } | undefined {
    const buffer = this.term.buffer.active;
    for (let y = 0; y < this.term.rows; y++) {
      const line = buffer.getLine(buffer.viewportY + y);
      const at = line?.translateToString(true).indexOf(text) ?? -1;
      if (line === undefined || at < 0) continue;
      const cell = line.getCell(at);
      if (!cell) return undefined;
      return { palette: cell.isFgPalette() ? cell.getFgColor() : undefined, bold: cell.isBold() !== 0 };
    }
    return undefined;
  }

  /** Waits until the screen satisfies `check` (polled every 100 ms); throws with the screen after `timeoutMs`. */
  async waitFor(check: (lines: string[]) => boolean, what: string, timeoutMs = 120_000): Promise<string[]> {
    const until = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const lines = this.lines();
      if (check(lines)) return lines;
      if (Date.now() > until || exited)
        throw new Error(`${exited ? "the program exited" : "timed out"} waiting for ${what}; the screen:\n${lines.join("\n")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Waits until the screen shows every one of `texts`. */
  waitForText(texts: readonly (string | RegExp)[], timeoutMs?: number): Promise<string[]> {
    return this.waitFor(
      (lines) => {
        const screen = lines.join("\n");
        return texts.every((text) => (typeof text === "string" ? screen.includes(text) : text.test(screen)));
      },
      texts.map(String).join(", "),
      timeoutMs,
    );
  }

  /** Types `keys` (raw: "q", "\x1b[B" for ↓). */
  type(keys: string): void {
    this.process.write(keys);
  }

  resize(cols: number, rows: number): void {
    this.process.resize(cols, rows);
    this.term.resize(cols, rows);
  }

  kill(): void {
    try {
      this.process.kill("SIGKILL");
    } catch {
      // gone already
    }
  }
}
