// Colour for what a person reads on a terminal: green for passed, red for failed, yellow for stuck
// and warnings, dim for secondary text. Only on a TTY, never when NO_COLOR is set (any value, the
// empty string included, as Node itself reads it), and FORCE_COLOR read as Node reads it (0 or
// false: never; 1, 2, 3, true or empty: always, even into a pipe). NO_COLOR wins over FORCE_COLOR:
// a person who asked for no colour gets none. The escape codes come from node:util's styleText,
// which costs nothing at start-up: node:util is loaded by Node itself, and it is taken with
// process.getBuiltinModule only when colour is on (an ESM import of node:util costs about 0.5 ms).
import type { styleText as StyleText } from "node:util";

export type Tone = "passed" | "failed" | "warning" | "dim" | "strong";

export interface Style {
  /** Whether this style writes escape codes at all. */
  readonly enabled: boolean;
  passed(text: string): string;
  failed(text: string): string;
  warning(text: string): string;
  dim(text: string): string;
  strong(text: string): string;
  tone(tone: Tone | undefined, text: string): string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Whether to colour a stream: a pure decision on whether it is a terminal and on the environment. */
export function colourWanted(isTTY: boolean, env: Env): boolean {
  if (env.NO_COLOR !== undefined) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force === "" || force === "1" || force === "2" || force === "3" || force === "true";
  if (!isTTY) return false;
  return env.NODE_DISABLE_COLORS === undefined && env.TERM !== "dumb";
}

const FORMATS: Record<Tone, Parameters<typeof StyleText>[0]> = {
  passed: "green",
  failed: "red",
  warning: "yellow",
  dim: "dim",
  strong: "bold",
};

export function makeStyle(enabled: boolean): Style {
  const styleText = enabled ? process.getBuiltinModule("node:util").styleText : undefined;
  // validateStream: false — the decision is colourWanted's; styleText must not make its own (its
  // checks differ between Node versions).
  const paint = (tone: Tone | undefined, text: string) =>
    styleText && tone && text !== "" ? styleText(FORMATS[tone], text, { validateStream: false }) : text;
  return {
    enabled,
    passed: (text) => paint("passed", text),
    failed: (text) => paint("failed", text),
    warning: (text) => paint("warning", text),
    dim: (text) => paint("dim", text),
    strong: (text) => paint("strong", text),
    tone: paint,
  };
}

/** The style for what is written to `stream` (stdout by default). */
export function styleFor(stream: { isTTY?: boolean } = process.stdout, env: Env = process.env): Style {
  return makeStyle(colourWanted(stream.isTTY === true, env));
}

export const PLAIN: Style = makeStyle(false);
