// How numbers and tables are printed: Markdown tables ready for the docs, numbers as en-US.

export const ms = (value: number | null) => (value === null ? "–" : Math.round(value).toLocaleString("en-US"));
export const int = (value: number) => value.toLocaleString("en-US");
export const fixed = (value: number | null, digits = 1) => (value === null || !Number.isFinite(value) ? "–" : value.toFixed(digits));
export const dollars = (value: number) => `$${value < 10 ? value.toFixed(2) : Math.round(value).toLocaleString("en-US")}`;
/** Dollars, below a cent with two significant digits (a run of the midnight commit costs fractions of one). */
export const smallDollars = (value: number) => (value >= 0.01 || value <= 0 ? dollars(value) : `$${value.toFixed(1 - Math.floor(Math.log10(value)))}`);

/** A Markdown table; the first `textColumns` columns are left-aligned, the (numeric) rest right-aligned. */
export function markdownTable(header: string[], rows: string[][], textColumns: number): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map((_, i) => (i < textColumns ? "---" : "---:"))), ...rows.map(line)].join("\n");
}
