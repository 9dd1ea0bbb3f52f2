const { money } = require("./money");

exports.table = function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)));
  return rows.map((row) => "| " + row.map((cell, i) => String(cell).padEnd(widths[i])).join(" | ") + " |").join("\n");
};
exports.money = money;
