//! Raw HTTP/1.1 to a server the tests start, one request a connection, so a
//! test sends exactly the headers it means to (or leaves out the ones a
//! client library would add).

use std::io::{Read, Write};

/// `method path` with `headers` and `body` to `address`, with `Host:
/// address` unless `headers` names a host: the status and the whole
/// response, headers and body, or why none came.
pub(crate) fn send(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(address)?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("Host: {address}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    // A refused body may be cut off; what was sent is enough.
    let _ = stream.write_all(body.as_bytes());
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {response:?}")))?;
    Ok((status, response))
}
