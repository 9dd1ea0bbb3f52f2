//! What the `cordon` benchmarks share: the machine's load, printed beside
//! each figure.

/// The load averages over 1, 5 and 15 minutes, as `/proc/loadavg` gives
/// them; empty where there is no such file.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}
