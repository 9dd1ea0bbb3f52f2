export const total = (rows, field) => rows.reduce((sum, row) => sum + Number(row[field]), 0);
export default function parse(text) {
  const [header, ...lines] = text.trim().split("\n").map((line) => line.split(","));
  return lines.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i]])));
}
