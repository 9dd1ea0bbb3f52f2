//! node's command line: which program to run and with which arguments.
//! Options that change nothing in the sandbox (warnings, heap sizes,
//! experimental flags) are accepted and ignored; options that would load
//! code from elsewhere (`--require`, `--import`) are refused by name.

/// The version `node --version` prints: the Node.js API this follows.
pub const VERSION: &str = "v22.0.0-cordon";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `node FILE ARG...`.
    Script { path: String, args: Vec<String> },
    /// `node -e CODE ARG...` (or `-p`, which prints the result).
    Eval {
        source: String,
        print: bool,
        module: bool,
        args: Vec<String>,
    },
    /// `node -` or `node` with no file: the program on standard input.
    Stdin { module: bool, args: Vec<String> },
    /// `node --version`.
    Version,
    /// `node --help`.
    Help,
}

/// A command line node refuses, with its message and exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub status: i32,
}

/// The usage `node --help` prints.
pub const USAGE: &str = "Usage: node [options] [ script.js | -e \"script\" | - ] [arguments]

Options:
  -e, --eval SCRIPT        evaluate SCRIPT
  -p, --print SCRIPT       evaluate SCRIPT and print its result
  --input-type=module      read -e, -p and standard input as an ES module
  -v, --version            print the version
  -h, --help               print this help
  -                        read the script from standard input
Warning, heap and experimental options are accepted and ignored.
Runs on QuickJS in Cordon's sandbox: fs, path, process, console, Buffer,
url, util, events, os, assert and timers are built in; child_process,
network and worker modules are not.
";

/// Options taking no argument that change nothing here.
const IGNORED: &[&str] = &[
    "--no-warnings",
    "--no-deprecation",
    "--enable-source-maps",
    "--trace-warnings",
    "--trace-uncaught",
    "--throw-deprecation",
    "--preserve-symlinks",
    "--no-experimental-fetch",
    "--abort-on-uncaught-exception",
];

/// Prefixes of options with `=VALUE` (or flags of a family) that change
/// nothing here.
const IGNORED_PREFIXES: &[&str] = &[
    "--experimental-",
    "--no-experimental-",
    "--max-old-space-size=",
    "--max-semi-space-size=",
    "--stack-size=",
    "--stack-trace-limit=",
    "--unhandled-rejections=",
    "--harmony",
    "--disable-warning=",
    "--title=",
];

/// Reads `args`, what follows `node` on the command line.
pub fn parse(args: &[String]) -> Result<Program, Refusal> {
    let mut module = false;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let option = first.as_str();
        match option {
            "-v" | "--version" => return Ok(Program::Version),
            "-h" | "--help" => return Ok(Program::Help),
            "-e" | "--eval" | "-p" | "--print" | "-pe" => {
                let Some((source, args)) = tail.split_first() else {
                    return Err(refusal(format!("node: {option} requires an argument"), 9));
                };
                return Ok(Program::Eval {
                    source: source.clone(),
                    print: option.starts_with("-p") || option == "--print",
                    module,
                    args: args.to_vec(),
                });
            }
            "-" => {
                // As in Node, `-` is the script's name in `process.argv`.
                return Ok(Program::Stdin {
                    module,
                    args: rest.to_vec(),
                });
            }
            "--" => {
                rest = tail;
                break;
            }
            "--input-type=module" => module = true,
            "--input-type=commonjs" => module = false,
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader" => {
                return Err(refusal(
                    format!(
                        "node: {option} is not available in the sandbox: a script imports what it needs itself"
                    ),
                    9,
                ));
            }
            _ if IGNORED.contains(&option)
                || IGNORED_PREFIXES
                    .iter()
                    .any(|prefix| option.starts_with(prefix)) => {}
            _ if option.starts_with('-') && option.len() > 1 => {
                return Err(refusal(format!("node: bad option: {option}"), 9));
            }
            _ => break,
        }
        rest = tail;
    }
    match rest.split_first() {
        None => Ok(Program::Stdin {
            module,
            args: Vec::new(),
        }),
        Some((path, args)) => Ok(Program::Script {
            path: path.clone(),
            args: args.to_vec(),
        }),
    }
}

fn refusal(message: String, status: i32) -> Refusal {
    Refusal { message, status }
}
