//! The operator's approval of the MCP servers agents may list, and the
//! admission of an agent's declaration against it. The agent file says what
//! it wants; only the operator's config says what may run, so an agent (or
//! whoever wrote its file) cannot reach an origin, start a program, or
//! change an approved program's arguments or environment on its own.

use std::collections::BTreeMap;
use std::time::Duration;

use cordon_kernel::McpServerDecl;
use cordon_wasm::{Host, Origin, Scheme, SecretValue};
use url::Url;

/// What the operator approved of one MCP server, from its `[mcp.NAME]`
/// table.
#[derive(Debug, Clone)]
pub struct ServerApproval {
    /// Where the approval is written, such as `.cordon/config.toml: [mcp.docs]`.
    pub written: String,
    /// The origins a remote server may be reached at.
    pub origins: Vec<Origin>,
    /// Set when the operator marked the server `unsandboxed = true`: the one
    /// command it may run on this host.
    pub local: Option<LocalApproval>,
    /// The bearer token sent to a remote server, and only to it.
    pub bearer: Option<SecretValue>,
    /// How long one call may take.
    pub timeout: Duration,
    /// Whether the server's tool annotations are believed.
    pub trusted: bool,
    /// The largest result a call may return, in bytes of JSON.
    pub output_bytes: usize,
}

/// A local server as the operator approved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalApproval {
    /// The program, then its arguments.
    pub command: Vec<String>,
    /// Variables set for it besides `PATH`, `HOME`, `LANG` and `TMPDIR`.
    pub env: BTreeMap<String, String>,
}

/// A server admitted to a run.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// Its name in the agent file: its tools travel as `NAME.TOOL`.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// How long one call may take.
    pub timeout: Duration,
    /// Whether its tool annotations are believed.
    pub trusted: bool,
    /// The largest result a call may return, in bytes of JSON.
    pub output_bytes: usize,
}

/// How an admitted server is reached.
#[derive(Debug, Clone)]
pub enum Transport {
    /// Streamable HTTP at `url`, through the network policy.
    Remote {
        /// The endpoint.
        url: Url,
        /// The bearer token it receives.
        bearer: Option<SecretValue>,
    },
    /// A program on this host, outside any sandbox, over stdio.
    Local(LocalApproval),
}

impl Admitted {
    /// What a person deciding about one of its calls should know about
    /// where it runs, when it runs outside any sandbox.
    pub fn unsandboxed(&self) -> Option<String> {
        match &self.transport {
            Transport::Local(local) => Some(format!(
                "unsandboxed: MCP server `{}` runs `{}` on this host, outside any sandbox",
                self.name,
                local.command.join(" ")
            )),
            Transport::Remote { .. } => None,
        }
    }
}

/// Why a server an agent lists is not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The operator's config has no `[mcp.NAME]` table.
    #[error(
        "{agent}: field `mcp.{name}`: the operator has not approved MCP server `{name}`; to admit it, add to the operator config (.cordon/config.toml):\n{lines}"
    )]
    NotApproved {
        /// The agent file.
        agent: String,
        /// The server.
        name: String,
        /// The table that would approve it.
        lines: String,
    },
    /// The URL is not one a client can reach.
    #[error("{agent}: field `mcp.{name}.url` = {url:?}: {reason}")]
    BadUrl {
        /// The agent file.
        agent: String,
        /// The server.
        name: String,
        /// The URL as written.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The URL's origin is not one the operator grants.
    #[error(
        "{agent}: field `mcp.{name}.url`: {url} is at origin {origin}, which {written} does not grant; add {origin:?} to its `origins` to let agents reach it"
    )]
    OriginNotGranted {
        /// The agent file.
        agent: String,
        /// The server.
        name: String,
        /// The URL.
        url: String,
        /// Its origin.
        origin: String,
        /// Where the approval is written.
        written: String,
    },
    /// A local server the operator did not mark `unsandboxed = true`.
    #[error(
        "{agent}: field `mcp.{name}.command`: a local server runs on this host outside any sandbox, and {written} does not say so; add `unsandboxed = true` and `command = {command}` to it"
    )]
    NotUnsandboxed {
        /// The agent file.
        agent: String,
        /// The server.
        name: String,
        /// Where the approval is written.
        written: String,
        /// The agent's command as TOML.
        command: String,
    },
    /// A local server whose command is not the approved one.
    #[error(
        "{agent}: field `mcp.{name}.command` = {asked}: {written} approves only `command = {approved}`; a local server runs exactly as approved"
    )]
    CommandDiffers {
        /// The agent file.
        agent: String,
        /// The server.
        name: String,
        /// Where the approval is written.
        written: String,
        /// The agent's command as TOML.
        asked: String,
        /// The approved command as TOML.
        approved: String,
    },
    /// A remote server the operator approved only as a local one.
    #[error(
        "{agent}: field `mcp.{name}.url`: {written} approves `{name}` as a local server only; give it `origins` to reach it over HTTP"
    )]
    LocalOnly {
        /// The agent file.
        agent: String,
        /// The server.
        name: String,
        /// Where the approval is written.
        written: String,
    },
}

/// Admit server `name` as `agent` (its file, for messages) declares it,
/// under the operator's `approval` of it.
pub fn admit(
    agent: &str,
    name: &str,
    declared: &McpServerDecl,
    approval: Option<&ServerApproval>,
) -> Result<Admitted, Refusal> {
    let Some(approval) = approval else {
        return Err(Refusal::NotApproved {
            agent: agent.to_owned(),
            name: name.to_owned(),
            lines: approving_lines(name, declared),
        });
    };
    let transport = match declared {
        McpServerDecl::Remote { url } => remote(agent, name, url, approval)?,
        McpServerDecl::Local { command } => {
            let Some(local) = &approval.local else {
                return Err(Refusal::NotUnsandboxed {
                    agent: agent.to_owned(),
                    name: name.to_owned(),
                    written: approval.written.clone(),
                    command: toml_list(command),
                });
            };
            if &local.command != command {
                return Err(Refusal::CommandDiffers {
                    agent: agent.to_owned(),
                    name: name.to_owned(),
                    written: approval.written.clone(),
                    asked: toml_list(command),
                    approved: toml_list(&local.command),
                });
            }
            Transport::Local(local.clone())
        }
    };
    Ok(Admitted {
        name: name.to_owned(),
        transport,
        timeout: approval.timeout,
        trusted: approval.trusted,
        output_bytes: approval.output_bytes,
    })
}

fn remote(
    agent: &str,
    name: &str,
    written_url: &str,
    approval: &ServerApproval,
) -> Result<Transport, Refusal> {
    let bad = |reason: &str| Refusal::BadUrl {
        agent: agent.to_owned(),
        name: name.to_owned(),
        url: written_url.to_owned(),
        reason: reason.to_owned(),
    };
    let url = Url::parse(written_url).map_err(|error| bad(&error.to_string()))?;
    let (scheme, host, port) = origin_of(&url).map_err(|reason| bad(&reason))?;
    if approval.origins.is_empty() && approval.local.is_some() {
        return Err(Refusal::LocalOnly {
            agent: agent.to_owned(),
            name: name.to_owned(),
            written: approval.written.clone(),
        });
    }
    if !approval
        .origins
        .iter()
        .any(|origin| origin.matches(scheme, &host, port))
    {
        return Err(Refusal::OriginNotGranted {
            agent: agent.to_owned(),
            name: name.to_owned(),
            url: url.to_string(),
            origin: shown_origin(&url),
            written: approval.written.clone(),
        });
    }
    Ok(Transport::Remote {
        url,
        bearer: approval.bearer.clone(),
    })
}

/// The scheme, host and port `url` is reached at.
pub(crate) fn origin_of(url: &Url) -> Result<(Scheme, Host, u16), String> {
    let scheme = match url.scheme() {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => return Err(format!("the scheme `{other}` is not https or http")),
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err("a URL holds no user name or password; the operator gives a `bearer`".into());
    }
    let host = match url.host() {
        Some(url::Host::Domain(name)) => Host::parse(name)?,
        Some(url::Host::Ipv4(ip)) => Host::Ip(ip.into()),
        Some(url::Host::Ipv6(ip)) => Host::Ip(ip.into()),
        None => return Err("it names no host".into()),
    };
    let port = url.port_or_known_default().ok_or("it names no port")?;
    Ok((scheme, host, port))
}

/// `url`'s origin as an operator writes it.
fn shown_origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The operator's table that would admit `declared` as written.
fn approving_lines(name: &str, declared: &McpServerDecl) -> String {
    match declared {
        McpServerDecl::Remote { url } => {
            let origin = Url::parse(url)
                .map(|url| shown_origin(&url))
                .unwrap_or_else(|_| url.clone());
            format!("  [mcp.{name}]\n  origins = [{origin:?}]")
        }
        McpServerDecl::Local { command } => format!(
            "  [mcp.{name}]\n  unsandboxed = true      # it runs on this host, outside any sandbox\n  command = {}",
            toml_list(command)
        ),
    }
}

/// `items` as a TOML array of strings.
fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| format!("{item:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(origins: &[&str], local: Option<&[&str]>) -> ServerApproval {
        ServerApproval {
            written: "config.toml: [mcp.docs]".into(),
            origins: origins
                .iter()
                .map(|origin| Origin::parse(origin).unwrap())
                .collect(),
            local: local.map(|command| LocalApproval {
                command: command.iter().map(|part| (*part).to_owned()).collect(),
                env: BTreeMap::new(),
            }),
            bearer: None,
            timeout: Duration::from_secs(60),
            trusted: false,
            output_bytes: 1 << 20,
        }
    }

    fn remote(url: &str) -> McpServerDecl {
        McpServerDecl::Remote { url: url.into() }
    }

    fn local(command: &[&str]) -> McpServerDecl {
        McpServerDecl::Local {
            command: command.iter().map(|part| (*part).to_owned()).collect(),
        }
    }

    #[test]
    fn a_remote_server_is_admitted_only_at_a_granted_origin() {
        let granted = approval(&["https://docs.example.com", "https://*.tools.test"], None);
        for allowed in [
            "https://docs.example.com/mcp",
            "https://DOCS.example.com:443/mcp?x=1",
            "https://a.tools.test/mcp",
        ] {
            admit("agent.toml", "docs", &remote(allowed), Some(&granted))
                .unwrap_or_else(|error| panic!("{allowed}: {error}"));
        }
        for refused in [
            "http://docs.example.com/mcp",
            "https://docs.example.com:8443/mcp",
            "https://evil.example.com/mcp",
            "https://a.b.tools.test/mcp",
            "https://docs.example.com.evil.test/mcp",
        ] {
            let error = admit("agent.toml", "docs", &remote(refused), Some(&granted)).unwrap_err();
            assert!(
                matches!(error, Refusal::OriginNotGranted { .. }),
                "{refused}: {error}"
            );
        }
    }

    #[test]
    fn a_url_with_credentials_or_another_scheme_is_refused_by_name() {
        let granted = approval(&["https://*:*"], None);
        for (url, says) in [
            ("https://user:pw@docs.example.com/mcp", "user name"),
            ("ftp://docs.example.com/mcp", "`ftp`"),
            ("not a url", "relative URL"),
        ] {
            let error = admit("agent.toml", "docs", &remote(url), Some(&granted)).unwrap_err();
            assert!(matches!(error, Refusal::BadUrl { .. }), "{url}: {error}");
            assert!(error.to_string().contains(says), "{url}: {error}");
        }
    }

    #[test]
    fn an_unapproved_server_is_refused_with_the_lines_that_would_approve_it() {
        let error = admit(
            "agent.toml",
            "git",
            &local(&["uvx", "mcp-server-git"]),
            None,
        )
        .unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("agent.toml: field `mcp.git`"), "{text}");
        assert!(text.contains("[mcp.git]\n  unsandboxed = true"), "{text}");
        assert!(
            text.contains(r#"command = ["uvx", "mcp-server-git"]"#),
            "{text}"
        );
        let error = admit("agent.toml", "docs", &remote("https://d.test/mcp"), None).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(r#"origins = ["https://d.test"]"#),
            "{error}"
        );
    }

    #[test]
    fn a_local_server_runs_only_as_the_operator_approved_it() {
        let origins_only = approval(&["https://docs.example.com"], None);
        let error = admit(
            "a",
            "docs",
            &local(&["sh", "-c", "id"]),
            Some(&origins_only),
        )
        .unwrap_err();
        assert!(matches!(error, Refusal::NotUnsandboxed { .. }), "{error}");
        let approved = approval(&[], Some(&["python3", "server.py"]));
        admit(
            "a",
            "docs",
            &local(&["python3", "server.py"]),
            Some(&approved),
        )
        .unwrap();
        for changed in [
            &["python3", "server.py", "--evil"][..],
            &["python3", "other.py"],
            &["sh", "-c", "python3 server.py"],
        ] {
            let error = admit("a", "docs", &local(changed), Some(&approved)).unwrap_err();
            assert!(matches!(error, Refusal::CommandDiffers { .. }), "{error}");
        }
        let error = admit(
            "a",
            "docs",
            &remote("https://docs.example.com/mcp"),
            Some(&approved),
        )
        .unwrap_err();
        assert!(matches!(error, Refusal::LocalOnly { .. }), "{error}");
    }
}
