//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! installed by `scripts/toolchains.sh mcp` as `cordon-mcp-conformance`) in
//! server mode against `cordon mcp --http`, for the 2025-11-25 and the
//! 2026-07-28 requirements. The suite's `test_*` tools are the `test` bundle
//! of real components, so every check goes through the sandbox. What is
//! expected to fail is listed, with its reason, in
//! `tests/mcp/conformance-baseline.yml`; any other failure, or a listed
//! entry that passes, fails the test.

use std::path::Path;
use std::process::Command;

use cordon_test_artifacts as artifacts;

use crate::support::mcp::{FIXTURES_ELICITING, HttpServer};
use crate::support::{Project, text};

fn suite(server: &HttpServer, requirements: &str) {
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/conformance-baseline.yml");
    let results = tempfile::tempdir().unwrap();
    let output = Command::new("cordon-mcp-conformance")
        .args(["server", "--url"])
        .arg(format!("http://{}/mcp", server.address))
        .args(["--requirements", requirements, "--expected-failures"])
        .arg(&baseline)
        .arg("-o")
        .arg(results.path())
        .output()
        .unwrap_or_else(|error| {
            panic!(
                "cannot run `cordon-mcp-conformance` ({error}): install it with \
                 `eval \"$(scripts/toolchains.sh mcp)\"`"
            )
        });
    let said = text(&output.stdout);
    assert!(
        output.status.success(),
        "the conformance suite ({requirements}) found what the baseline does not expect:\n{}\n{}",
        said.lines()
            .skip_while(|line| !line.contains("SUMMARY"))
            .collect::<Vec<_>>()
            .join("\n"),
        text(&output.stderr)
    );
    assert!(said.contains("Baseline check passed"), "{said}");
}

#[test]
fn the_official_suite_passes_for_both_protocol_eras_beside_its_baseline() {
    let project = Project::new();
    project.bundle("test", FIXTURES_ELICITING, artifacts::MCP_FIXTURES);
    project.approve("test");
    project.write("permissions.toml", "default = \"allow\"\n");
    let server = HttpServer::start(&project, &[]);
    suite(&server, "2025-11-25");
    suite(&server, "2026-07-28");
}
