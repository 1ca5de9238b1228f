// Progress of a long run over many items (reconcile): done of total, rate, time left. Pure, so the line
// it prints is tested without waiting.

export interface ProgressState {
  done: number;
  total: number;
  elapsedMs: number;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function progressLine({ done, total, elapsedMs }: ProgressState): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const percent = total > 0 ? Math.min(100, Math.floor((done * 100) / total)) : 100;
  const left = Math.max(0, total - done);
  const eta = left === 0 ? "0 s" : rate > 0 ? duration(left / rate) : "?";
  return `${done}/${total} counters (${percent}%), ${rate.toFixed(1)}/s, ${eta} left`;
}
