// How a refusal of bad input is worded, on the command line and by `runner mcp`'s tools alike: a
// check's clause as a sentence, and the nearest name to a mistyped one.

/** A check's clause as the sentence of a refusal. */
export const sentence = (clause: string) => `${clause[0]!.toUpperCase()}${clause.slice(1)}.`;

/** ` (did you mean X?)` for the closest name within two edits, else nothing. */
export function suggestion(given: string, names: readonly string[], show: (name: string) => string = (name) => name): string {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(given.toLowerCase(), name.toLowerCase());
    if (distance <= 2 && distance < (best?.distance ?? Infinity)) best = { name, distance };
  }
  return best ? ` (did you mean ${show(best.name)}?)` : "";
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
