//! A WASI command that prints a greeting: a component of the wrong world for
//! the host's bundle loader to reject.

fn main() {
    println!("hello");
}
