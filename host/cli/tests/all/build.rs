//! `cordon new` and `cordon build` as a tool author uses them: a bundle
//! written from each language's template builds with the toolchains
//! `scripts/toolchains.sh` installs, is compiled into the cache, passes
//! `cordon plugins check` and answers `cordon tool call`; broken builds and
//! bad requests fail with errors that name the file, field or value.

use std::process::Output;

use crate::support::{Project, both, text};

fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// `cordon new tool NAME --lang LANG` into `plugins/NAME`, then `cordon
/// build`, `cordon plugins check` and two calls of `NAME.greet`.
fn new_build_check_call(project: &Project, kind: &str, lang: &str, name: &str) {
    let folder = format!("plugins/{name}");
    let wrote = succeeded(&project.cordon(&["new", kind, name, &folder, "--lang", lang]));
    assert!(
        wrote.contains(&format!("next   cordon build {folder}")),
        "{wrote}"
    );
    let ignored = project
        .read(&format!("{folder}/.gitignore"))
        .unwrap_or_default();
    assert!(
        ignored.contains("*.wasm"),
        "the bundle's build output is ignored: {ignored:?}"
    );

    let built = succeeded(&project.cordon(&["build", &folder]));
    assert!(built.contains(&format!("{name}.wasm: ")), "{built}");
    assert!(built.contains(", new in "), "{built}");
    assert!(
        built.contains("cached for the first call"),
        "the build compiles into the cache: {built}"
    );
    assert!(built.contains("1 bundle(s) built, 0 failed"), "{built}");
    if kind == "tool" {
        assert!(built.contains(&format!("tools: {name}.greet;")), "{built}");
    }

    assert!(
        built.contains(&format!(
            "it does not load yet: it asks for state read [{name}.greetings]"
        )) && built.contains(&format!("`cordon grants approve {name}`")),
        "what it asks for waits for the operator: {built}"
    );
    project.approve(&folder_name(&folder));
    let checked = succeeded(&project.cordon(&["plugins", "check", "plugins"]));
    assert!(
        checked.contains(&format!("ok     {name} 0.1.0")),
        "{checked}"
    );
    assert!(
        checked.contains("; cached, "),
        "no compile on the first use: {checked}"
    );
}

/// The bundle name of the bundle folder `folder` (`plugins/NAME`).
fn folder_name(folder: &str) -> String {
    folder.rsplit('/').next().unwrap_or(folder).to_owned()
}

fn greet(project: &Project, name: &str) {
    let args = r#"{"name": "Ada", "excited": true}"#;
    let first =
        succeeded(&project.cordon(&["tool", "call", &format!("{name}.greet"), "--args", args]));
    assert_eq!(first.trim(), "Hello, Ada! (greeting 1)");
    let blank = project.cordon(&[
        "tool",
        "call",
        &format!("{name}.greet"),
        "--args",
        r#"{"name": " "}"#,
    ]);
    assert_eq!(blank.status.code(), Some(1));
    assert!(
        text(&blank.stderr).contains("invalid-input: name must not be blank"),
        "{}",
        text(&blank.stderr)
    );
    // Every template's schema refuses an argument it does not name.
    let misspelt = project.cordon(&[
        "tool",
        "call",
        &format!("{name}.greet"),
        "--args",
        r#"{"name": "Ada", "exited": true}"#,
    ]);
    assert_eq!(misspelt.status.code(), Some(1));
    assert!(
        text(&misspelt.stderr).contains("invalid-input")
            && text(&misspelt.stderr).contains("exited"),
        "{}",
        text(&misspelt.stderr)
    );
}

#[test]
fn a_python_tool_from_the_template_builds_and_answers() {
    let project = Project::with_own_cache();
    new_build_check_call(&project, "tool", "python", "greet-py");
    greet(&project, "greet-py");
}

#[test]
fn a_python_tool_bundles_its_pure_python_dependencies_and_refuses_native_ones() {
    let project = Project::with_own_cache();
    succeeded(&project.cordon(&["new", "tool", "pick", "plugins/pick", "--lang", "python"]));
    project.write("plugins/pick/requirements.txt", "jmespath==1.0.1\n");
    let app = project.read("plugins/pick/app.py").unwrap();
    project.write(
        "plugins/pick/app.py",
        &format!(
            "{app}\n\nimport jmespath\n\n\n@tool(\"pick.search\", read_only=True)\ndef search(data: dict, expression: str) -> object:\n    \"\"\"Search data with a JMESPath expression.\"\"\"\n    return jmespath.search(expression, data)\n"
        ),
    );
    succeeded(&project.cordon(&["build", "plugins/pick"]));
    project.approve("pick");
    let found = succeeded(&project.cordon(&[
        "tool",
        "call",
        "pick.search",
        "--args",
        r#"{"data": {"a": [{"b": 1}, {"b": 2}]}, "expression": "a[].b"}"#,
    ]));
    assert_eq!(found.split_whitespace().collect::<String>(), "[1,2]");

    project.write("plugins/pick/requirements.txt", "pyyaml==6.0.2\n");
    let output = project.cordon(&["build", "plugins/pick"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("No matching distribution found for pyyaml==6.0.2"),
        "{stderr}"
    );
    assert!(stderr.contains("field `build.command` failed"), "{stderr}");
}

#[test]
fn a_javascript_tool_from_the_template_builds_and_answers() {
    let project = Project::with_own_cache();
    new_build_check_call(&project, "tool", "js", "greet-js");
    greet(&project, "greet-js");
}

#[test]
fn a_go_tool_from_the_template_builds_and_answers() {
    let project = Project::with_own_cache();
    new_build_check_call(&project, "tool", "go", "greet-go");
    greet(&project, "greet-go");
}

#[test]
fn a_c_tool_from_the_template_builds_and_answers() {
    let project = Project::with_own_cache();
    new_build_check_call(&project, "tool", "c", "greet-c");
    greet(&project, "greet-c");
}

#[test]
fn a_rust_tool_and_a_rust_hook_from_the_templates_build_and_work() {
    let project = Project::with_own_cache();
    new_build_check_call(&project, "tool", "rust", "greet-rs");
    greet(&project, "greet-rs");
    let built = succeeded(&project.cordon(&["new", "hook", "blocklist", "plugins/blocklist"]));
    assert!(built.contains("rust hook"), "{built}");
    let built = succeeded(&project.cordon(&["build", "plugins/blocklist"]));
    assert!(built.contains("cached for the first call"), "{built}");
    assert!(built.contains("hooks: before-tool-call;"), "{built}");
    let checked = succeeded(&project.cordon(&["plugins", "check", "plugins"]));
    assert!(checked.contains("hooks:  before-tool-call"), "{checked}");

    // The hook denies a call that mentions a blocked word, through a run.
    project.write(
        "agent.toml",
        "name = \"a\"\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"greet-rs.greet\"\nargs = { name = \"my password\" }\n\n[[turn]]\ntext = \"Done.\"\n",
    );
    let run = project.run_scripted("blocked", &["--json"]);
    let lines = text(&run.stdout);
    assert!(
        lines.contains("the arguments of greet-rs.greet mention `password`"),
        "{lines}\n{}",
        text(&run.stderr)
    );
}

#[test]
fn rebuilding_reports_whether_the_component_changed() {
    let project = Project::with_own_cache();
    succeeded(&project.cordon(&["new", "tool", "again", "plugins/again", "--lang", "c"]));
    succeeded(&project.cordon(&["build", "plugins/again"]));
    let again = succeeded(&project.cordon(&["build", "plugins"]));
    assert!(again.contains("unchanged"), "{again}");
    assert!(again.contains("already compiled"), "{again}");
}

#[test]
fn a_failing_build_names_the_manifest_field_and_the_others_still_build() {
    let project = Project::with_own_cache();
    project.write(
        "plugins/broken/plugin.toml",
        "[plugin]\nname = \"broken\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"broken.wasm\"\n[build]\ncommand = \"echo compiling && exit 3\"\n",
    );
    project.write(
        "plugins/missing/plugin.toml",
        "[plugin]\nname = \"missing\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"m.wasm\"\n[build]\ncommand = \"no-such-compiler-here m.c\"\n",
    );
    project.write(
        "plugins/silent/plugin.toml",
        "[plugin]\nname = \"silent\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"silent.wasm\"\n[build]\ncommand = \"true\"\n",
    );
    succeeded(&project.cordon(&["new", "tool", "fine", "plugins/fine", "--lang", "c"]));
    let output = project.cordon(&["build", "plugins"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("broken/plugin.toml: field `build.command` failed (exit status: 3)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("silent/plugin.toml: the build succeeded but did not write")
            && stderr.contains("field `plugin.component`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("missing/plugin.toml: field `build.command` failed (exit status: 127)")
            && stderr.contains("is its toolchain installed and on PATH?"),
        "{stderr}"
    );
    let stdout = text(&output.stdout);
    assert!(stdout.contains("1 bundle(s) built, 3 failed"), "{stdout}");
}

#[test]
fn new_refuses_bad_names_occupied_folders_and_missing_templates() {
    let project = Project::with_own_cache();
    let output = project.cordon(&["new", "tool", "Bad_Name"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("bundle name \"Bad_Name\""),
        "{}",
        text(&output.stderr)
    );

    project.write("taken/file.txt", "mine");
    let output = project.cordon(&["new", "tool", "x", "taken", "--lang", "python"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("already exists and is not empty"));
    assert_eq!(project.read("taken/file.txt").as_deref(), Some("mine"));

    let output = project.cordon(&["new", "hook", "x", "--lang", "python"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr)
            .contains("there is no hook template for python; `cordon new hook` knows: rust"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_rust_sandbox_backend_from_the_template_builds_and_serves_a_run() {
    let project = Project::with_own_cache();
    let wrote = succeeded(&project.cordon(&["new", "sandbox", "mybox", "plugins/mybox"]));
    assert!(wrote.contains("rust sandbox"), "{wrote}");
    let built = succeeded(&project.cordon(&["build", "plugins/mybox"]));
    project.approve("mybox");
    assert!(built.contains("cached for the first call"), "{built}");
    let checked = succeeded(&project.cordon(&["plugins", "check", "plugins"]));
    assert!(checked.contains("workspace backend"), "{checked}");

    project.write(
        "agent.toml",
        "name = \"a\"\nsandbox = \"mybox\"\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"write\"\nargs = { path = \"notes/plan.md\", content = \"ship it\\n\" }\n\n[[turn]]\ntext = \"Done.\"\n",
    );
    let run = project.run_scripted("boxed", &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(project.read("notes/plan.md").as_deref(), Some("ship it\n"));
}

#[test]
fn the_javascript_template_builds_on_quickjs_with_the_command_its_manifest_suggests() {
    let project = Project::with_own_cache();
    succeeded(&project.cordon(&[
        "new",
        "tool",
        "greet-qjs",
        "plugins/greet-qjs",
        "--lang",
        "js",
    ]));
    let manifest = project.read("plugins/greet-qjs/plugin.toml").unwrap();
    // The manifest suggests the QuickJS command in a comment; use it instead.
    let suggested: Vec<&str> = manifest
        .lines()
        .skip_while(|line| !line.starts_with("# For QuickJS"))
        .skip(1)
        .take_while(|line| line.starts_with("#   "))
        .map(|line| line.trim_start_matches("#   "))
        .collect();
    assert!(suggested.len() >= 2, "{manifest}");
    let start = manifest.find("command = \"\"\"").unwrap();
    let end = start + manifest[start..].find("\n\"\"\"").unwrap() + 4;
    let quickjs = format!(
        "{}command = \"\"\"\n{}\n\"\"\"{}",
        &manifest[..start],
        suggested.join("\n"),
        &manifest[end..]
    );
    project.write("plugins/greet-qjs/plugin.toml", &quickjs);
    let built = succeeded(&project.cordon(&["build", "plugins/greet-qjs"]));
    project.approve("greet-qjs");
    assert!(built.contains("greet-qjs.wasm: "), "{built}");
    greet(&project, "greet-qjs");
}

#[test]
fn an_authors_loop_is_build_with_approve_then_call_and_each_approval_says_what_changed() {
    let project = Project::with_own_cache();
    succeeded(&project.cordon(&["new", "tool", "loop", "plugins/loop", "--lang", "c"]));
    let built = succeeded(&project.cordon(&["build", "plugins/loop", "--approve"]));
    assert!(
        built.contains("approved loop for sha256:")
            && built.contains("beyond the approval: state read"),
        "the build approves what it asks: {built}"
    );
    let args = r#"{"name": "Ada"}"#;
    let first = succeeded(&project.cordon(&["tool", "call", "loop.greet", "--args", args]));
    assert!(first.starts_with("Hello, Ada"), "{first}");

    let source = project.read("plugins/loop/tool.c").unwrap();
    project.write(
        "plugins/loop/tool.c",
        &source.replace("\"Hello, \"", "\"Hi, \""),
    );
    let rebuilt = succeeded(&project.cordon(&["build", "plugins/loop", "--approve"]));
    assert!(
        rebuilt.contains("its component changed since the last approval"),
        "{rebuilt}"
    );
    let again = succeeded(&project.cordon(&["tool", "call", "loop.greet", "--args", args]));
    assert!(
        again.starts_with("Hi, Ada"),
        "the edit, build, call loop is one step: {again}"
    );

    // Without --approve the build says how to make it callable.
    project.write("plugins/loop/tool.c", &source);
    let plain = succeeded(&project.cordon(&["build", "plugins/loop"]));
    assert!(
        plain.contains("its component changed since the operator approved it")
            && plain.contains("(or build with --approve)"),
        "{plain}"
    );
}

#[test]
fn a_build_error_is_not_buried_under_a_toolchains_own_backtrace() {
    let project = Project::new();
    project.write(
        "plugins/loud/plugin.toml",
        "[plugin]\nname = \"loud\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"loud.wasm\"\n[build]\ncommand = \"echo \\\"error values: ${RUST_LIB_BACKTRACE-captured}; panics: $RUST_BACKTRACE\\\" && exit 2\"\n",
    );
    let output = project
        .command(&["build", "plugins/loud"])
        .env("RUST_BACKTRACE", "1")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .unwrap();
    let said = both(&output);
    assert!(
        said.contains("error values: 0; panics: 1"),
        "a Rust toolchain captures no backtrace for its error, and keeps a panic's: {said}"
    );
    // Asked for, the backtraces come back.
    let asked = project
        .command(&["build", "plugins/loud"])
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .unwrap();
    assert!(
        both(&asked).contains("error values: 1; panics: 1"),
        "{}",
        both(&asked)
    );
}
