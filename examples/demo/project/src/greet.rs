/// The greeting for `name`.
pub fn greet(name: &str) -> String {
    format!("Hello, {name}")
}
