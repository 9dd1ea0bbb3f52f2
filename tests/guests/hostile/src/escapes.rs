//! Attempts to reach the host's filesystem, environment and network through WASI.

use crate::args::{AddrArgs, NameArgs, PathArgs, WriteArgs};
use cordon_sdk::ToolError;
use serde_json::json;

hostile_tool!(
    ReadFile,
    "hostile.read-file",
    "Read a file with std::fs.",
    PathArgs,
    |args| match std::fs::read_to_string(&args.path) {
        Ok(content) => Ok(json!({ "content": content })),
        Err(error) => Err(ToolError::Failed(format!("{error}"))),
    }
);

hostile_tool!(
    WriteFile,
    "hostile.write-file",
    "Write a file with std::fs.",
    WriteArgs,
    |args| match std::fs::write(&args.path, args.content) {
        Ok(()) => Ok(json!({ "written": true })),
        Err(error) => Err(ToolError::Failed(format!("{error}"))),
    }
);

hostile_tool!(
    ListDir,
    "hostile.list-dir",
    "List a directory with std::fs.",
    PathArgs,
    |args| {
        let names = std::fs::read_dir(&args.path)
            .and_then(|entries| {
                entries
                    .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|error| ToolError::Failed(format!("{error}")))?;
        Ok(json!({ "entries": names }))
    }
);

hostile_tool!(
    Env,
    "hostile.env",
    "Read one environment variable and list all of them.",
    NameArgs,
    |args| Ok(json!({
        "value": std::env::var(&args.name).ok(),
        "all": std::env::vars().collect::<Vec<_>>(),
    }))
);

hostile_tool!(
    Connect,
    "hostile.connect",
    "Open a TCP connection.",
    AddrArgs,
    |args| match std::net::TcpStream::connect(&args.addr) {
        Ok(_) => Ok(json!({ "connected": true })),
        Err(error) => Err(ToolError::Failed(format!("{error}"))),
    }
);
