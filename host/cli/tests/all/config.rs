//! Where plugins and defaults come from, as a user sets them up: the plugins
//! search path (repeatable `--plugins`, `CORDON_PLUGINS`, the project's and
//! the user's folders), `cordon plugins install`, the config files' `plugins`
//! and `[defaults]`, and the model a run picks when none is named.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::{Project, both, text};

/// Write a `notes` bundle at version `version` into `folder` of `project`.
fn notes_at(project: &Project, folder: &str, version: &str) {
    let bundle = project.path(folder).join("notes");
    std::fs::create_dir_all(&bundle).unwrap();
    let manifest =
        std::fs::read_to_string(Path::new(artifacts::PLUGINS_DIR).join("notes/plugin.toml"))
            .unwrap()
            .replace("version = \"0.1.0\"", &format!("version = \"{version}\""));
    assert!(
        manifest.contains(version),
        "the notes manifest names its version"
    );
    std::fs::write(bundle.join("plugin.toml"), manifest).unwrap();
    std::fs::copy(artifacts::NOTES, bundle.join("notes.wasm")).unwrap();
}

/// Write the bundled `jq` into `folder` of `project`.
fn jq_in(project: &Project, folder: &str) {
    let bundle = project.path(folder).join("jq");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::copy(
        Path::new(artifacts::PLUGINS_DIR).join("jq/plugin.toml"),
        bundle.join("plugin.toml"),
    )
    .unwrap();
    std::fs::copy(artifacts::JQ, bundle.join("jq.wasm")).unwrap();
}

/// `cordon plugins check --json` with `args`, and what it printed.
fn check(project: &Project, args: &[&str], env: &[(&str, &str)]) -> (Value, String) {
    let mut command = project.command(&[&["plugins", "check", "--json"], args].concat());
    command.envs(env.iter().copied());
    let output = command.output().unwrap();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("a JSON report: {}", both(&output)));
    (report, text(&output.stderr))
}

/// The name and version of every bundle a report lists.
fn loaded(report: &Value) -> Vec<String> {
    report["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|bundle| {
            format!(
                "{} {}",
                bundle["name"].as_str().unwrap(),
                bundle["version"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn plugins_load_along_the_search_path_and_an_earlier_bundle_shadows_a_later_one() {
    let project = Project::new();
    notes_at(&project, "first", "0.2.0");
    notes_at(&project, "second", "0.1.0");
    jq_in(&project, "second");

    let (report, _) = check(
        &project,
        &["--plugins", "first", "--plugins", "second"],
        &[],
    );
    assert_eq!(loaded(&report), ["notes 0.2.0", "jq 0.1.0"]);
    let shadowed = report["shadowed"][0].as_str().unwrap();
    assert!(
        shadowed.contains("bundle `notes` in")
            && shadowed.contains("first/notes shadows the one in"),
        "{shadowed}"
    );
    assert_eq!(report["folders"][0]["source"], "--plugins");
    assert_eq!(report["folders"][2]["source"], "project");

    // The same path from the environment, `:`-separated; `tool list` warns.
    let listed = project
        .command(&["tool", "list"])
        .env("CORDON_PLUGINS", "second:first")
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", both(&listed));
    assert!(
        text(&listed.stdout).contains("jq.query"),
        "{}",
        both(&listed)
    );
    assert!(
        text(&listed.stderr).contains("second/notes shadows the one in"),
        "{}",
        both(&listed)
    );

    // A flag replaces the environment's folders.
    let (report, _) = check(
        &project,
        &["--plugins", "first"],
        &[("CORDON_PLUGINS", "second")],
    );
    assert_eq!(loaded(&report), ["notes 0.2.0"]);

    // A positional folder of `plugins check` is one more `--plugins`.
    let (report, _) = check(&project, &["second"], &[]);
    assert_eq!(loaded(&report), ["jq 0.1.0", "notes 0.1.0"]);
}

#[test]
fn a_folder_chosen_but_missing_is_named_with_where_it_was_chosen() {
    let project = Project::new();
    let flag = project.cordon(&["tool", "list", "--plugins", "nowhere"]);
    assert_eq!(flag.status.code(), Some(2));
    assert!(
        text(&flag.stderr)
            .contains("nowhere (--plugins) does not exist; pass another --plugins DIR"),
        "{}",
        both(&flag)
    );
    let env = project
        .command(&["tool", "list"])
        .env("CORDON_PLUGINS", "gone")
        .output()
        .unwrap();
    assert_eq!(env.status.code(), Some(2));
    assert!(
        text(&env.stderr).contains("gone (CORDON_PLUGINS) does not exist; fix CORDON_PLUGINS"),
        "{}",
        both(&env)
    );
    let none = project.cordon(&["tool", "list"]);
    assert_eq!(none.status.code(), Some(2));
    let said = text(&none.stderr);
    for place in [
        "plugins (default)",
        ".cordon/plugins (project)",
        "cordon/plugins (user)",
    ] {
        assert!(said.contains(place), "names {place}: {said}");
    }
}

#[test]
fn an_installed_bundle_is_found_from_any_project_and_a_reinstall_replaces_it() {
    let project = Project::new();
    notes_at(&project, "src", "0.1.0");
    let installed = project.cordon(&["plugins", "install", "src"]);
    assert!(installed.status.success(), "{}", both(&installed));
    assert!(
        text(&installed.stdout).starts_with("installed notes 0.1.0 in"),
        "{}",
        both(&installed)
    );
    let user = project.data_home().join("cordon/plugins/notes");
    assert!(user.join("plugin.toml").is_file() && user.join("notes.wasm").is_file());

    // A run in this project, which has no plugins folder of its own, uses it.
    let called = project.cordon(&["tool", "call", "notes.list"]);
    assert!(called.status.success(), "{}", both(&called));

    notes_at(&project, "newer", "0.3.0");
    let again = project.cordon(&["plugins", "install", "newer/notes"]);
    assert!(
        text(&again.stdout).starts_with("replaced notes 0.3.0"),
        "{}",
        both(&again)
    );
    let (report, _) = check(&project, &[], &[]);
    assert_eq!(loaded(&report), ["notes 0.3.0"]);
    let leftovers: Vec<_> = std::fs::read_dir(project.data_home().join("cordon/plugins"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["notes"], "nothing half-copied is left");

    // Into the project's folder instead, which comes before the user's.
    notes_at(&project, "mine", "0.4.0");
    let local = project.cordon(&["plugins", "install", "--project", "mine"]);
    assert!(local.status.success(), "{}", both(&local));
    let (report, _) = check(&project, &[], &[]);
    assert_eq!(loaded(&report), ["notes 0.4.0"]);
}

#[test]
fn a_bundle_that_is_not_whole_is_not_installed() {
    let project = Project::new();
    notes_at(&project, "src", "0.1.0");
    std::fs::remove_file(project.path("src/notes/notes.wasm")).unwrap();
    jq_in(&project, "src");
    let missing = project.cordon(&["plugins", "install", "src"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stdout).contains("installed jq"),
        "the whole one is: {}",
        both(&missing)
    );
    assert!(
        text(&missing.stderr).contains("field `component` = \"notes.wasm\": no such file"),
        "{}",
        both(&missing)
    );
    // A manifest pointing its component outside its folder, at a file the
    // installer would otherwise copy, is refused by name.
    project.write(
        "escape/notes/plugin.toml",
        "[plugin]\nname = \"notes\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"../../secret.wasm\"\n",
    );
    project.write("secret.wasm", "not yours");
    let escape = project.cordon(&["plugins", "install", "escape"]);
    assert_eq!(escape.status.code(), Some(1));
    assert!(
        text(&escape.stderr).contains("plugin.component"),
        "{}",
        both(&escape)
    );
    assert!(!project.data_home().join("cordon/plugins/notes").exists());
    let empty = project.cordon(&["plugins", "install", "."]);
    assert!(
        text(&empty.stderr).contains("no bundle in ."),
        "{}",
        both(&empty)
    );
}

#[test]
fn the_config_files_choose_plugins_folders_the_project_over_the_user_and_flags_over_both() {
    let project = Project::new();
    notes_at(&project, "team", "0.2.0");
    jq_in(&project, "mine");
    project.write(
        "config/cordon/config.toml",
        &format!(
            "plugins = [{:?}]\n",
            project.path("mine").display().to_string()
        ),
    );
    let user_config = project.path("config");
    let with_user = |args: &[&str]| {
        let mut command = project.command(&[&["plugins", "check", "--json"], args].concat());
        command.env("XDG_CONFIG_HOME", &user_config);
        let output = command.output().unwrap();
        serde_json::from_slice::<Value>(&output.stdout)
            .unwrap_or_else(|_| panic!("{}", both(&output)))
    };
    assert_eq!(loaded(&with_user(&[])), ["jq 0.1.0"]);
    // The project's config, relative to the project.
    project.write(".cordon/config.toml", "plugins = [\"team\"]\n");
    let report = with_user(&[]);
    assert_eq!(loaded(&report), ["notes 0.2.0"]);
    assert!(
        report["folders"][0]["source"]
            .as_str()
            .unwrap()
            .contains(".cordon/config.toml"),
        "{report}"
    );
    assert_eq!(loaded(&with_user(&["--plugins", "mine"])), ["jq 0.1.0"]);

    project.write(".cordon/config.toml", "plugins = \"team\"\n");
    let bad = project.cordon(&["tool", "list"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains(".cordon/config.toml") && text(&bad.stderr).contains("plugins"),
        "{}",
        both(&bad)
    );
}

const SAVE_THEN_ANSWER: &str = r#"
[[turn]]
[[turn.call]]
tool = "notes.add"
args = { title = "Milk", body = "buy milk" }

[[turn]]
text = "Saved."
"#;

#[test]
fn the_configs_defaults_give_a_run_without_an_agent_file_its_model_permissions_and_step_limit() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    project.write("script.toml", SAVE_THEN_ANSWER);
    project.write("allow.toml", "default = \"allow\"\n");
    project.write(
        ".cordon/config.toml",
        "[defaults]\nmodel = \"scripted:script.toml\"\npermissions = \"allow.toml\"\n",
    );
    let output = project.cordon(&["run", "--run-id", "d1", "save milk"]);
    assert!(output.status.success(), "{}", both(&output));
    assert!(text(&output.stdout).contains("Saved."), "{}", both(&output));
    assert_eq!(project.show("d1")["state"]["notes"][0]["title"], "Milk");

    project.write(
        ".cordon/config.toml",
        "[defaults]\nmodel = \"scripted:script.toml\"\npermissions = \"allow.toml\"\nmax-steps = 1\n",
    );
    let limited = project.cordon(&["run", "--run-id", "d2", "save milk"]);
    assert_eq!(limited.status.code(), Some(1), "{}", both(&limited));
    assert!(
        text(&limited.stdout).contains("step limit"),
        "{}",
        both(&limited)
    );

    project.write(".cordon/config.toml", "[defaults]\nmodel = \"gpt-5\"\n");
    let bad = project.cordon(&["run", "hi"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains(
            ".cordon/config.toml: field `defaults.model` = \"gpt-5\": expected PROVIDER:MODEL"
        ),
        "{}",
        both(&bad)
    );
}

#[test]
fn a_run_without_a_model_names_every_provider_or_picks_the_one_whose_key_is_set() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    let none = project.cordon(&["run", "hi"]);
    assert_eq!(none.status.code(), Some(2));
    let said = text(&none.stderr);
    for provider in [
        "scripted:FILE",
        "openai:MODEL",
        "anthropic:MODEL",
        "ANTHROPIC_API_KEY",
    ] {
        assert!(said.contains(provider), "names {provider}: {said}");
    }

    // With Anthropic's key set, its default model is picked and said so; the
    // endpoint here refuses the key, so the run stops at its first step.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let mut stream = stream.unwrap();
            let mut request = [0_u8; 65536];
            let _ = stream.read(&mut request);
            let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let picked = project
        .command(&["run", "--run-id", "p1", "hi"])
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", format!("http://{address}"))
        .output()
        .unwrap();
    assert!(
        text(&picked.stderr).contains("model: anthropic:claude-sonnet-4-5 (ANTHROPIC_API_KEY is set; choose another with --model)"),
        "{}",
        both(&picked)
    );
    assert_eq!(
        project.show("p1")["run"]["metadata"]["model"],
        "anthropic:claude-sonnet-4-5"
    );
}

#[test]
fn a_resumed_run_searches_every_folder_it_recorded() {
    let project = Project::new();
    notes_at(&project, "first", "0.1.0");
    jq_in(&project, "second");
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\nask = [\"notes.add\"]\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"notes.add\"\nargs = { title = \"a\", body = \"b\" }\n\
         [[turn]]\n[[turn.call]]\ntool = \"jq.query\"\nargs = { filter = \".\", input = 1 }\n[[turn]]\ntext = \"Done.\"\n",
    );
    let waiting = project.run_scripted("w1", &["--plugins", "first", "--plugins", "second"]);
    assert_eq!(waiting.status.code(), Some(3), "{}", both(&waiting));
    let recorded = project.show("w1")["run"]["metadata"]["plugins"]
        .as_str()
        .unwrap()
        .to_owned();
    let folders: Vec<String> = serde_json::from_str(&recorded).unwrap();
    assert_eq!(folders.len(), 2, "{recorded}");
    let resumed = project.cordon(&["runs", "resume", "w1", "--approve-all"]);
    assert!(
        resumed.status.success(),
        "both folders found again: {}",
        both(&resumed)
    );
    assert!(
        text(&resumed.stdout).contains("Done."),
        "{}",
        both(&resumed)
    );
}

#[test]
fn a_workspaces_runs_live_in_it_wherever_cordon_is_run_from() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    std::fs::create_dir_all(project.path("site")).unwrap();
    let added = project.cordon(&[
        "--workspace",
        "site",
        "tool",
        "call",
        "notes.add",
        "--args",
        r#"{"title":"Milk","body":"buy milk"}"#,
    ]);
    assert!(added.status.success(), "{}", both(&added));
    assert!(project.path("site/.cordon/cordon.db").is_file());
    assert!(!project.path(".cordon/cordon.db").exists());
    let listed = project.cordon(&["--workspace", "site", "tool", "call", "notes.list"]);
    assert!(text(&listed.stdout).contains("Milk"), "{}", both(&listed));
    let elsewhere = project.cordon(&["runs", "list"]);
    assert_eq!(elsewhere.status.code(), Some(2), "{}", both(&elsewhere));
    assert!(
        text(&elsewhere.stderr).contains("no run store at .cordon/cordon.db"),
        "{}",
        both(&elsewhere)
    );
}

#[test]
fn the_bundled_plugins_install_from_the_source_tree_cordon_was_built_from() {
    let project = Project::new();
    let output = project.cordon(&["plugins", "install", "--bundled"]);
    let said = both(&output);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{said}");
    let installed = project.data_home().join("cordon/plugins");
    for bundle in [
        "budget", "dir", "files", "guard", "http", "jq", "memory", "notes", "python", "redactor",
    ] {
        let manifest = Path::new(artifacts::PLUGINS_DIR)
            .join(bundle)
            .join("plugin.toml");
        let component = component_of(&manifest);
        let built = Path::new(artifacts::PLUGINS_DIR)
            .join(bundle)
            .join(&component);
        if built.is_file() {
            assert!(said.contains(&format!("installed {bundle} ")), "{said}");
            assert!(
                installed.join(bundle).join(&component).is_file(),
                "{bundle}"
            );
        } else {
            assert!(
                said.contains("not installed (build the bundled plugins with"),
                "an unbuilt bundle says how to build it: {said}"
            );
            assert!(!installed.join(bundle).exists(), "{bundle}");
        }
    }
}

/// The `component` field of the manifest `file`.
fn component_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let value: toml::Value = toml::from_str(&text).unwrap();
    value["plugin"]["component"].as_str().unwrap().to_owned()
}

#[test]
fn plugins_check_takes_a_bundle_folder_and_says_how_to_build_an_unbuilt_one() {
    let project = Project::new();
    let manifest = "[plugin]\nname = \"greet\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"greet.wasm\"\n[build]\ncommand = \"cp built.wasm greet.wasm\"\n";
    project.write("plugins/greet/plugin.toml", manifest);
    project.write("plugins/greet/__pycache__/app.cpython-314.pyc", "bytecode");
    let checked = project.cordon(&["plugins", "check", "plugins/greet"]);
    let said = both(&checked);
    assert_eq!(
        checked.status.code(),
        Some(1),
        "an unbuilt bundle is an error: {said}"
    );
    assert!(
        said.contains("cannot read") && said.contains("run `cordon build plugins/greet`"),
        "{said}"
    );
    assert!(
        !said.contains("__pycache__"),
        "the folder is the bundle: {said}"
    );
    assert!(said.contains("(argument)"), "{said}");

    std::fs::copy(artifacts::HOSTILE, project.path("plugins/greet/greet.wasm")).unwrap();
    project.write(
        "plugins/greet/plugin.toml",
        &manifest.replace("name = \"greet\"", "name = \"hostile\""),
    );
    let checked = project.cordon(&["plugins", "check", "plugins/greet"]);
    let said = both(&checked);
    assert!(checked.status.success(), "{said}");
    assert!(said.contains("ok     hostile 0.1.0 (tool)"), "{said}");
    assert!(said.contains("1 bundle(s) valid, 0 error(s)"), "{said}");
}
