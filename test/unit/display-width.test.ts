// Display width (src/cli/display-width.ts): the columns a terminal gives a line, by which the live
// block clips its lines and counts the rows it must erase.
import { describe, expect, it } from "vitest";
import { clipToWidth, displayWidth, isPlainNarrow, printable, rowsOf } from "../../src/cli/display-width.js";

describe("displayWidth", () => {
  it.each([
    ["", 0],
    ["abc", 3],
    ["naïve", 5],
    ["日本語", 6],
    ["한국어", 6],
    ["ｆｕｌｌ", 8],
    ["カタカナ", 8],
    ["。", 2],
    ["🚀", 2],
    ["⚡", 2],
    ["👩‍💻", 2],
    ["👍🏽", 2],
    ["🇫🇷", 2],
    ["🇫🇷🇩🇪", 4],
    ["👨‍👩‍👧‍👦", 2],
    ["❤️", 2],
    ["1️⃣", 2],
    ["❤", 1],
    ["✓ ○ ! ← …", 9],
    ["e\u0301", 1],
    ["a\u0300\u0301\u0302", 1],
    ["\u200b", 0],
    ["\u1100\u1161\u11a8", 2],
    ["\x1b[31mred\x1b[39m", 3],
    ["\x1b[2m日本\x1b[22m", 4],
  ])("%j takes %i columns", (text, columns) => {
    expect(displayWidth(text)).toBe(columns);
  });
});

describe("clipToWidth", () => {
  it("leaves a line that fits as it is", () => {
    expect(clipToWidth("abc", 3)).toBe("abc");
    expect(clipToWidth("日本", 4)).toBe("日本");
  });

  it("cuts by columns, not by characters, and ends in …", () => {
    expect(clipToWidth("abcdef", 4)).toBe("abc…");
    expect(clipToWidth("日本語のタイトル", 7)).toBe("日本語…");
    expect(clipToWidth("日本語のタイトル", 8)).toBe("日本語…");
    expect(displayWidth(clipToWidth("日本語のタイトル", 8))).toBeLessThanOrEqual(8);
  });

  it("never cuts an emoji sequence or a combining mark from its letter", () => {
    expect(clipToWidth("ab👩‍💻cd", 4)).toBe("ab…");
    expect(clipToWidth("ab👩‍💻cd", 5)).toBe("ab👩‍💻…");
    expect(clipToWidth("e\u0301e\u0301e\u0301", 2)).toBe("e\u0301…");
    expect(clipToWidth("🇫🇷🇩🇪🇮🇹", 5)).toBe("🇫🇷🇩🇪…");
  });

  it("keeps colour codes and resets after a cut", () => {
    expect(clipToWidth("\x1b[31mabcdef\x1b[39m", 4)).toBe("\x1b[31mabc…\x1b[0m");
    expect(clipToWidth("\x1b[31mab\x1b[39m", 4)).toBe("\x1b[31mab\x1b[39m");
  });

  it("every clip fits, whatever the text", () => {
    const samples = [
      "▶ run r1 · iteration 3 · agent · 1.2s · 日本語のタイトル 🚀🚀🚀 with a long tail",
      "👩‍💻".repeat(40),
      "e\u0301".repeat(90),
      "한".repeat(70),
    ];
    for (const text of samples) {
      for (let columns = 1; columns < 120; columns++)
        expect(displayWidth(clipToWidth(text, columns)), `${text} at ${columns}`).toBeLessThanOrEqual(columns);
    }
  });
});

describe("rowsOf and printable", () => {
  it("a line wider than the terminal takes more than one row", () => {
    expect(rowsOf("", 80)).toBe(1);
    expect(rowsOf("a".repeat(80), 80)).toBe(1);
    expect(rowsOf("a".repeat(81), 80)).toBe(2);
    expect(rowsOf("日".repeat(41), 80)).toBe(2);
  });

  it("tabs become spaces and control characters go, so the width measured is the width drawn", () => {
    expect(printable("a\tb")).toBe("a    b");
    expect(printable("\x1b[2Jgone\rback\x07")).toBe("[2Jgoneback");
  });
});

describe("the fast path", () => {
  it("takes only code points that are one column wide and extend nothing", () => {
    let checked = 0;
    for (let code = 0; code <= 0x3ffff; code++) {
      if (!isPlainNarrow(code)) continue;
      checked++;
      const char = String.fromCodePoint(code);
      expect(/[\p{Mn}\p{Me}\p{Cf}\p{Cc}\p{Emoji_Presentation}]/u.test(char), code.toString(16)).toBe(false);
      expect(/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60]/u.test(char), code.toString(16)).toBe(false);
    }
    expect(checked).toBeGreaterThan(700);
  });
});
