//! GNU-style option parsing shared by the commands: combined short flags
//! (`-rn`), flags with values (`-n 5`, `-n5`), `--` to end options, and
//! options mixed with operands.

/// Parsed arguments of a command.
#[derive(Debug, Default)]
pub(super) struct Args {
    /// Flags in the order given, with their values.
    pub flags: Vec<(char, Option<String>)>,
    /// Everything that is not an option.
    pub operands: Vec<String>,
}

impl Args {
    /// Parses `args`, where the letters in `switches` are flags without a
    /// value and those in `valued` take one; the error is a usage message.
    pub(super) fn parse(args: &[String], switches: &str, valued: &str) -> Result<Self, String> {
        let mut parsed = Args::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            if arg == "--" {
                parsed.operands.extend(rest.cloned());
                break;
            }
            if arg.starts_with("--") {
                return Err(format!("unrecognized option '{arg}'"));
            }
            let Some(letters) = arg.strip_prefix('-').filter(|letters| !letters.is_empty()) else {
                parsed.operands.push(arg.clone());
                continue;
            };
            for (at, flag) in letters.char_indices() {
                if switches.contains(flag) {
                    parsed.flags.push((flag, None));
                } else if valued.contains(flag) {
                    let inline = &letters[at + flag.len_utf8()..];
                    let value = if inline.is_empty() {
                        rest.next()
                            .cloned()
                            .ok_or_else(|| format!("option requires an argument -- '{flag}'"))?
                    } else {
                        inline.to_owned()
                    };
                    parsed.flags.push((flag, Some(value)));
                    break;
                } else {
                    return Err(format!("invalid option -- '{flag}'"));
                }
            }
        }
        Ok(parsed)
    }

    /// Whether `flag` was given.
    pub(super) fn has(&self, flag: char) -> bool {
        self.flags.iter().any(|(given, _)| *given == flag)
    }

    /// The last value given for `flag`.
    pub(super) fn value(&self, flag: char) -> Option<&str> {
        self.values(flag).last()
    }

    /// Every value given for `flag`, in order.
    pub(super) fn values(&self, flag: char) -> impl Iterator<Item = &str> {
        self.flags
            .iter()
            .filter(move |(given, _)| *given == flag)
            .filter_map(|(_, value)| value.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        Args::parse(&args, "rnv", "ek")
    }

    #[test]
    fn combines_and_mixes() {
        let args = parse(&["-rn", "x", "-k2", "-e", "p", "-", "--", "-v"]).unwrap();
        assert!(args.has('r') && args.has('n') && !args.has('v'));
        assert_eq!(args.value('k'), Some("2"));
        assert_eq!(args.value('e'), Some("p"));
        assert_eq!(args.operands, ["x", "-", "-v"]);
    }

    #[test]
    fn refuses_unknown_and_missing() {
        assert_eq!(parse(&["-z"]).unwrap_err(), "invalid option -- 'z'");
        assert_eq!(
            parse(&["-e"]).unwrap_err(),
            "option requires an argument -- 'e'"
        );
        assert_eq!(
            parse(&["--all"]).unwrap_err(),
            "unrecognized option '--all'"
        );
    }
}
