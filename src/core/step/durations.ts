// Durations as people read them, written in one place: `clock` for the terminal's counters (`0s`,
// `12s`, `1m 05s`, `1h 02m`), `timer` for an iteration's phases and the run's summary (`0.4s`,
// `12.3s`, then as clock), `words` for sentences and the report (`850 ms`, `4.2 s`, `42 s`,
// `3 min 05 s`, `1 h 02 min`).

export type DurationForm = "clock" | "timer" | "words";

export function formatDuration(ms: number, form: DurationForm = "words"): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  const words = form === "words";
  if (words && ms < 1000) return ms === 0 ? "0 s" : `${Math.round(ms)} ms`;
  if (form === "timer" && ms < 59_950) return `${(ms / 1000).toFixed(1)}s`;
  if (words && ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  // (the clock counts whole seconds passed, as a clock does)
  const seconds = form === "clock" ? Math.floor(ms / 1000) : Math.round(ms / 1000);
  if (seconds < 60) return words ? `${seconds} s` : `${seconds}s`;
  if (seconds < 3600) {
    const [m, s] = [Math.floor(seconds / 60), String(seconds % 60).padStart(2, "0")];
    return words ? `${m} min ${s} s` : `${m}m ${s}s`;
  }
  const minutes = form === "clock" ? Math.floor(seconds / 60) : Math.round(seconds / 60);
  const [h, m] = [Math.floor(minutes / 60), String(minutes % 60).padStart(2, "0")];
  return words ? `${h} h ${m} min` : `${h}h ${m}m`;
}
