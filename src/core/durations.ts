// Durations as people read them, written in one place: `clock` for the terminal's compact lines
// (`0.4s`, `1m 05s`, `1h 02m`), `words` for sentences and the report (`850 ms`, `4.2 s`, `42 s`,
// `3 min 05 s`, `1 h 02 min`).

export function formatDuration(ms: number, form: "clock" | "words" = "words"): string {
  const clock = form === "clock";
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (!clock && ms < 1000) return ms === 0 ? "0 s" : `${Math.round(ms)} ms`;
  if (ms < (clock ? 59_950 : 10_000)) return clock ? `${(ms / 1000).toFixed(1)}s` : `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) {
    const [m, s] = [Math.floor(seconds / 60), String(seconds % 60).padStart(2, "0")];
    return clock ? `${m}m ${s}s` : `${m} min ${s} s`;
  }
  const minutes = Math.round(seconds / 60);
  const [h, m] = [Math.floor(minutes / 60), String(minutes % 60).padStart(2, "0")];
  return clock ? `${h}h ${m}m` : `${h} h ${m} min`;
}
