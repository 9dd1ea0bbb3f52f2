//! Loading bundles: valid ones load with their tools, and every way a bundle can
//! be wrong is an error that names the file, the field and the value.

use std::path::Path;

use cordon_kernel::HookPhase;
use cordon_tests::{Fixture, artifacts, hook_manifest, host, manifest};
use cordon_wasm::{BundleError, BundleKind, CacheOutcome, Discarded, HostConfig, PluginHost};

async fn only_error(fixture: &Fixture) -> (BundleError, String) {
    let report = fixture.report(&host()).await;
    assert!(report.bundles.is_empty(), "nothing should load");
    let mut errors = report.errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = errors.remove(0);
    let text = error.to_string();
    (error, text)
}

#[tokio::test]
async fn the_bundled_plugins_load_with_their_tools() {
    let fixture = Fixture::new();
    fixture.bundled_plugin("jq", Path::new(artifacts::JQ));
    fixture.bundled_plugin("files", Path::new(artifacts::FILES));
    fixture.bundled_plugin("notes", Path::new(artifacts::NOTES));
    let report = fixture.report(&host()).await;
    let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut tools: Vec<String> = report
        .bundles
        .iter()
        .flat_map(|loaded| loaded.tools.iter().map(|tool| tool.name.clone()))
        .collect();
    tools.sort();
    for expected in [
        "files.list",
        "files.read",
        "files.search",
        "jq.query",
        "notes.add",
        "notes.list",
    ] {
        assert!(
            tools.iter().any(|tool| tool == expected),
            "{expected} in {tools:?}"
        );
    }
}

#[tokio::test]
async fn an_unknown_manifest_key_names_the_file_and_the_key() {
    let fixture = Fixture::new();
    let text = manifest("hostile", "[limits]\nmemory-mb = 3\n");
    let dir = fixture.bundle("bad", &text, Path::new(artifacts::HOSTILE));
    let (error, text) = only_error(&fixture).await;
    assert!(matches!(error, BundleError::Manifest(_)), "{error:?}");
    assert!(
        text.contains(&dir.join("plugin.toml").display().to_string()),
        "{text}"
    );
    assert!(text.contains("memory-mb"), "{text}");
}

#[tokio::test]
async fn malformed_toml_names_the_file_and_line() {
    let fixture = Fixture::new();
    fixture.bundle("bad", "[plugin\nname = 1", Path::new(artifacts::HOSTILE));
    let (_, text) = only_error(&fixture).await;
    assert!(
        text.contains("plugin.toml") && text.contains("line 1"),
        "{text}"
    );
}

#[tokio::test]
async fn a_missing_component_names_the_field_and_the_path() {
    let fixture = Fixture::new();
    let dir = fixture.bundle("gone", &manifest("gone", ""), Path::new(artifacts::HOSTILE));
    std::fs::remove_file(dir.join("tool.wasm")).unwrap();
    let (error, text) = only_error(&fixture).await;
    assert!(
        matches!(error, BundleError::ComponentUnreadable { .. }),
        "{error:?}"
    );
    assert!(
        text.contains("plugin.component") && text.contains("tool.wasm"),
        "{text}"
    );
}

#[tokio::test]
async fn a_component_whose_digest_differs_is_refused_and_a_matching_one_loads() {
    let fixture = Fixture::new();
    let wrong = "0".repeat(64);
    fixture.bundle(
        "pinned",
        &manifest("hostile", "").replace(
            "component = \"tool.wasm\"",
            &format!("component = \"tool.wasm\"\nsha256 = \"{wrong}\""),
        ),
        Path::new(artifacts::HOSTILE),
    );
    let (error, text) = only_error(&fixture).await;
    assert!(
        matches!(error, BundleError::DigestMismatch { .. }),
        "{error:?}"
    );
    assert!(
        text.contains("plugin.sha256") && text.contains(&wrong),
        "{text}"
    );

    let BundleError::DigestMismatch { actual, .. } = error else {
        unreachable!()
    };
    let fixture = Fixture::new();
    fixture.bundle(
        "pinned",
        &manifest("hostile", "").replace(
            "component = \"tool.wasm\"",
            &format!("component = \"tool.wasm\"\nsha256 = \"{actual}\""),
        ),
        Path::new(artifacts::HOSTILE),
    );
    fixture.load().await;
}

#[tokio::test]
async fn a_file_that_is_not_a_component_is_refused() {
    let fixture = Fixture::new();
    let dir = fixture.bundle("junk", &manifest("junk", ""), Path::new(artifacts::HOSTILE));
    std::fs::write(dir.join("tool.wasm"), b"\0asm but not really").unwrap();
    let (error, text) = only_error(&fixture).await;
    assert!(
        matches!(error, BundleError::NotAComponent { .. }),
        "{error:?}"
    );
    assert!(text.contains("tool.wasm"), "{text}");
}

#[tokio::test]
async fn a_component_of_the_wrong_world_is_refused_by_name() {
    let fixture = Fixture::new();
    fixture.bundle(
        "command",
        &manifest("command", ""),
        Path::new(artifacts::NOT_A_TOOL),
    );
    let (error, text) = only_error(&fixture).await;
    assert!(matches!(error, BundleError::WrongWorld { .. }), "{error:?}");
    assert!(text.contains("cordon:plugin/tool@0.1.0"), "{text}");
    assert!(
        text.contains("wasi:cli/run"),
        "lists what it does export: {text}"
    );
}

#[tokio::test]
async fn a_describe_with_a_bad_tool_name_or_schema_is_refused() {
    let fixture = Fixture::new();
    fixture.bundle(
        "bad-describe",
        &manifest("bad-describe", ""),
        Path::new(artifacts::BAD_DESCRIBE),
    );
    let (error, text) = only_error(&fixture).await;
    assert!(
        matches!(error, BundleError::InvalidTool { .. }),
        "{error:?}"
    );
    assert!(text.contains("Bad Name!"), "{text}");
}

#[tokio::test]
async fn a_bundle_describing_tools_outside_its_namespace_is_refused() {
    // A bundle named `files` whose component describes `hostile.*`, and one
    // named `evil` doing the same: neither may claim a name a rule such as
    // `allow = ["files.*"]` would give to another bundle.
    for name in ["files", "evil"] {
        let fixture = Fixture::new();
        fixture.bundle(name, &manifest(name, ""), Path::new(artifacts::HOSTILE));
        let (error, text) = only_error(&fixture).await;
        assert!(
            matches!(error, BundleError::InvalidTool { .. }),
            "{error:?}"
        );
        assert!(
            text.contains(&format!("tools of bundle `{name}` are named `{name}.NAME`")),
            "{text}"
        );
    }
}

#[tokio::test]
async fn two_bundles_with_one_name_are_a_conflict_and_only_the_first_loads() {
    let fixture = Fixture::new();
    fixture.bundle("a", &manifest("hostile", ""), Path::new(artifacts::HOSTILE));
    fixture.bundle("b", &manifest("hostile", ""), Path::new(artifacts::HOSTILE));
    let report = fixture.report(&host()).await;
    assert!(
        report.errors.iter().any(
            |error| matches!(error, BundleError::DuplicateBundle { name, .. } if name == "hostile")
        ),
        "{:?}",
        report.errors
    );
    let loaded: Vec<_> = report
        .bundles
        .iter()
        .map(|loaded| loaded.bundle.dir.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(
        loaded,
        ["a"],
        "the second is an error, not a bundle that loaded"
    );
}

#[tokio::test]
async fn a_sandbox_bundle_whose_component_is_no_backend_names_the_world_it_needs() {
    let fixture = Fixture::new();
    fixture.bundle(
        "sandbox",
        &manifest("sandbox", "").replace("kind = \"tool\"", "kind = \"sandbox\""),
        Path::new(artifacts::HOSTILE),
    );
    let (error, text) = only_error(&fixture).await;
    assert!(
        matches!(
            error,
            BundleError::WrongWorld {
                kind: BundleKind::Sandbox,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(text.contains("cordon:plugin/workspace@0.1.0"), "{text}");
    assert!(text.contains("sandbox-backend"), "{text}");
}

#[tokio::test]
async fn only_sandbox_bundles_may_set_a_staging_policy() {
    let fixture = Fixture::new();
    fixture.bundle(
        "jq",
        &manifest("jq", "").replace("kind = \"tool\"", "kind = \"tool\"\nstaging = \"always\""),
        Path::new(artifacts::JQ),
    );
    let (_, text) = only_error(&fixture).await;
    assert!(text.contains("plugin.staging"), "{text}");
}

#[tokio::test]
async fn a_hook_phase_the_component_does_not_export_is_a_load_error() {
    let fixture = Fixture::new();
    fixture.bundle(
        "gate",
        &hook_manifest("gate", &["before-tool-call"], ""),
        Path::new(artifacts::HOSTILE),
    );
    let (error, text) = only_error(&fixture).await;
    assert!(
        matches!(
            error,
            BundleError::MissingHook {
                phase: HookPhase::BeforeToolCall,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        text.contains("plugin.hooks") && text.contains("cordon:plugin/tool"),
        "{text}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_directory_grant_through_a_symlink_out_of_the_workspace_is_refused() {
    let fixture = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), fixture.workspace.path().join("escape")).unwrap();
    fixture.bundle(
        "escaper",
        &manifest(
            "escaper",
            "[[grants.dirs]]\nhost = \"escape\"\nguest = \"/x\"\nmode = \"ro\"\n",
        ),
        Path::new(artifacts::HOSTILE),
    );
    let (error, text) = only_error(&fixture).await;
    assert!(matches!(error, BundleError::DirGrant { .. }), "{error:?}");
    assert!(
        text.contains("grants.dirs[0].host") && text.contains("outside the workspace"),
        "{text}"
    );
}

#[tokio::test]
async fn a_missing_granted_directory_is_refused() {
    let fixture = Fixture::new();
    fixture.bundle(
        "absent",
        &manifest(
            "absent",
            "[[grants.dirs]]\nhost = \"nope\"\nguest = \"/x\"\nmode = \"ro\"\n",
        ),
        Path::new(artifacts::HOSTILE),
    );
    let (_, text) = only_error(&fixture).await;
    assert!(
        text.contains("grants.dirs[0].host") && text.contains("nope"),
        "{text}"
    );
}

/// A host of four instances whose compile cache is `cache`.
fn cached_host(cache: &Path) -> PluginHost {
    PluginHost::new(HostConfig {
        cache: Some(cordon_tests::cache_in(cache)),
        max_instances: 4,
    })
    .unwrap()
}

#[tokio::test]
async fn a_second_load_uses_the_compiled_cache_and_a_tampered_entry_never_runs() {
    let cache = tempfile::tempdir().unwrap();
    let host = || cached_host(cache.path());
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", ""),
        Path::new(artifacts::HOSTILE),
    );
    let first = fixture.report(&host()).await;
    assert_eq!(first.bundles[0].cache, CacheOutcome::Compiled);
    let second = fixture.report(&host()).await;
    assert_eq!(second.bundles[0].cache, CacheOutcome::Hit);
    let entry = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "cwasm"))
        .expect("the entry");
    let sealed = std::fs::read(&entry).unwrap();

    // Another component's entry, sealed with the same key, moved over it.
    let other = Fixture::new();
    other.bundled_plugin("jq", Path::new(artifacts::JQ));
    let jq_cache = tempfile::tempdir().unwrap();
    let jq_host = cached_host(jq_cache.path());
    assert!(other.report(&jq_host).await.errors.is_empty());
    let jq_entry = std::fs::read_dir(jq_cache.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "cwasm"))
        .expect("jq's entry");
    let mut flipped = sealed.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    for (what, tampered, why) in [
        (
            "swapped",
            std::fs::read(&jq_entry).unwrap(),
            Discarded::Unverified,
        ),
        ("bit-flipped", flipped, Discarded::Unverified),
        (
            "truncated",
            sealed[..sealed.len() - 4096].to_vec(),
            Discarded::Unverified,
        ),
        ("corrupted", b"corrupted".to_vec(), Discarded::Unverified),
    ] {
        std::fs::write(&entry, tampered).unwrap();
        let reloading = host();
        let loaded = fixture.report(&reloading).await;
        assert!(loaded.errors.is_empty(), "{what}: {:?}", loaded.errors);
        assert_eq!(
            loaded.bundles[0].cache,
            CacheOutcome::Replaced(why),
            "a {what} entry is discarded and compiled again"
        );
        assert_eq!(
            fixture.report(&host()).await.bundles[0].cache,
            CacheOutcome::Hit,
            "{what}: the entry was replaced"
        );
        let plugins = reloading
            .plugins(
                loaded.bundles,
                std::sync::Arc::new(cordon_kernel::EventLog::new()),
            )
            .unwrap_or_else(|errors| panic!("{}", errors[0]));
        let echoed = cordon_kernel::call_committed(
            &plugins,
            std::sync::Arc::new(cordon_kernel::MemoryStateStore::new()),
            "hostile.echo",
            serde_json::json!({ "said": what }),
        )
        .await
        .unwrap_or_else(|error| panic!("{what}: {error}"));
        assert_eq!(echoed.content["said"], what, "the component is its own");
    }
    let seal = entry.with_extension("seal");
    std::fs::write(&seal, b"not a seal").unwrap();
    assert_eq!(
        fixture.report(&host()).await.bundles[0].cache,
        CacheOutcome::Replaced(Discarded::Malformed),
        "a seal that is none is discarded with its code"
    );
}

#[tokio::test]
async fn a_component_swapped_after_its_digest_was_remembered_is_read_and_hashed_again() {
    let cache = tempfile::tempdir().unwrap();
    let host = || cached_host(cache.path());
    let fixture = Fixture::new();
    let folder = fixture.bundle(
        "hostile",
        &manifest("hostile", ""),
        Path::new(artifacts::HOSTILE),
    );
    let hostile = fixture.report(&host()).await.bundles[0]
        .bundle
        .digest
        .clone();
    // A file is vouched for by its fingerprint only once it has gone
    // unchanged for longer than any clock tick.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for _ in 0..3 {
        let loaded = fixture.report(&host()).await;
        assert_eq!(loaded.bundles[0].bundle.digest, hostile);
    }
    let remembered = std::fs::read_dir(cache.path().join("digests"))
        .map(|records| records.count())
        .unwrap_or(0);
    assert_eq!(
        remembered, 1,
        "the settled component's digest is remembered"
    );

    // Another component renamed over it: another inode, so it is read and
    // hashed, and what loads is judged as the file it is now (here `files`,
    // whose tools lie outside the bundle's namespace).
    let component = folder.join("tool.wasm");
    let swapped = component.with_extension("new");
    std::fs::copy(artifacts::FILES, &swapped).unwrap();
    std::fs::rename(&swapped, &component).unwrap();
    let loaded = fixture.report(&host()).await;
    assert!(
        loaded.bundles.is_empty(),
        "the old digest is never taken for the new file"
    );
    let refused = loaded.errors[0].to_string();
    assert!(
        refused.contains("outside the bundle's namespace"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_folder_without_a_manifest_is_reported_not_skipped() {
    let fixture = Fixture::new();
    let dir = fixture.plugins.path().join("forgotten");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(fixture.plugins.path().join(".git")).unwrap();
    std::fs::write(
        fixture.plugins.path().join("README.md"),
        "bundles live here",
    )
    .unwrap();
    let (_, text) = only_error(&fixture).await;
    assert!(
        text.contains("forgotten") && text.contains("no plugin.toml"),
        "{text}"
    );
}
