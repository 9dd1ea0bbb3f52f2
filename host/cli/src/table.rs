//! Plain-text tables for listings: a header and rows, each column as wide as
//! its widest cell, so the columns line up whatever the names are.

/// `rows` under `header`, each column as wide as its widest cell, the last
/// one left as it is.
pub(crate) fn print<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut line = String::new();
        for (index, cell) in cells.iter().enumerate() {
            if index + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[index]));
            }
        }
        println!("{}", line.trim_end());
    };
    line(header);
    for row in rows {
        line(std::array::from_fn(|index| row[index].as_str()));
    }
}
