//! Attempts to exhaust the host: endless loops, sleeps, memory, output and logs,
//! and abrupt ends (trap, panic).

use crate::args::{BytesArgs, NoArgs, SleepArgs};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;

hostile_tool!(Loop, "hostile.loop", "Spin forever.", NoArgs, |_| loop {
    black_box(());
});

hostile_tool!(
    Sleep,
    "hostile.sleep",
    "Sleep on the host's clock.",
    SleepArgs,
    |args| {
        std::thread::sleep(Duration::from_millis(args.ms));
        Ok(json!({ "slept": args.ms }))
    }
);

hostile_tool!(
    Alloc,
    "hostile.alloc",
    "Allocate and touch memory without end.",
    NoArgs,
    |_| {
        let mut hoard = Vec::new();
        loop {
            hoard.push(black_box(vec![1_u8; 1 << 20]));
        }
    }
);

hostile_tool!(
    Print,
    "hostile.print",
    "Print to stdout without end.",
    NoArgs,
    |_| loop {
        println!("hostile print");
    }
);

hostile_tool!(
    LogFlood,
    "hostile.log-flood",
    "Log without end.",
    NoArgs,
    |_| loop {
        cordon_sdk::log::info("hostile log flood");
    }
);

hostile_tool!(
    Trap,
    "hostile.trap",
    "Execute an unreachable instruction.",
    NoArgs,
    |_| trap()
);

hostile_tool!(Panic, "hostile.panic", "Panic.", NoArgs, |_| panic!(
    "hostile panic"
));

hostile_tool!(
    BigOutput,
    "hostile.big-output",
    "Return a string of the given size.",
    BytesArgs,
    |args| Ok(json!("x".repeat(args.bytes)))
);

#[cfg(target_arch = "wasm32")]
fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

#[cfg(not(target_arch = "wasm32"))]
fn trap() -> ! {
    panic!("hostile trap")
}
