//! What skills cost, each beside its baseline in the same run: finding and
//! checking 200 skills against only reading their SKILL.md files; a loop
//! step while a skill with `allowed-tools` is active against the same step
//! with none; the bundled Python interpreter's load, compiled and cached; and
//! a Python or JavaScript script through a backend's `bash` (a fresh
//! interpreter instance per command) against `echo` through the same `bash`,
//! and against the machine's own `python3` and `node` processes.
//!
//! Run with `cargo bench -p cordon-tests --bench skills` (after `cordon build
//! plugins/python plugins/node`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{
    AgentDef, EventLog, MemoryCommitStore, PermissionPolicy, Runtime, ToolSet, ToolSets, Verdict,
};
use cordon_providers::ScriptedModel;
use cordon_skills::{Catalog, Root, SkillTool, Source, discover};
use cordon_tests::{Rig, artifacts, built_bundle};
use cordon_wasm::{CacheOutcome, HostConfig, PluginHost, Plugins, Safeguards, WorkspaceOptions};

const SKILLS: usize = 200;
const STEPS: usize = 40;
const ROUNDS: usize = 7;

fn main() {
    discovery();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        active_skill_step().await;
        interpreter_load().await;
        script_runs().await;
    });
}

/// The median of `times`.
fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

fn us(time: Duration) -> f64 {
    time.as_secs_f64() * 1e6
}

/// A SKILL.md of about 2 KB, such as a real skill has.
fn skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Turn a table into a report; use when asked to summarise {name}.\n\
         license: Apache-2.0\nmetadata:\n  author: bench\n  version: \"1.0\"\n\
         allowed-tools: read glob grep bash(command=python3 *) {name}/*\n---\n# {name}\n\n{}",
        "Step by step, read the table, profile it, and write the report.\n".repeat(30)
    )
}

fn discovery() {
    let root = tempfile::tempdir().expect("skills");
    for index in 0..SKILLS {
        let name = format!("skill-{index:03}");
        let folder = root.path().join(&name);
        std::fs::create_dir_all(folder.join("references")).expect("folder");
        std::fs::write(folder.join("SKILL.md"), skill_md(&name)).expect("SKILL.md");
        std::fs::write(folder.join("references/format.md"), "# Format\n").expect("reference");
    }
    let roots = [Root {
        source: Source::Flag,
        dir: root.path().to_owned(),
    }];
    let mut found = Vec::new();
    let mut read = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let discovered = discover(&roots);
        let catalog = Catalog::of(&discovered);
        found.push(started.elapsed());
        assert_eq!(catalog.skills().count(), SKILLS, "{:?}", discovered.invalid);

        let started = Instant::now();
        let mut bytes = 0;
        for entry in std::fs::read_dir(root.path()).expect("read the root") {
            let path = entry.expect("entry").path().join("SKILL.md");
            bytes += std::fs::read_to_string(path).expect("read").len();
        }
        std::hint::black_box(bytes);
        read.push(started.elapsed());
    }
    let (found, read) = (median(&found), median(&read));
    println!(
        "finding and checking {SKILLS} skills: {:.2} ms; reading their SKILL.md files alone {:.2} ms; found/read = {:.1}",
        ms(found),
        ms(read),
        found.as_secs_f64() / read.as_secs_f64()
    );
}

/// The hostile tool bundle (for `hostile.echo`), loaded onto a fresh host.
async fn echo_plugins() -> (tempfile::TempDir, Arc<Plugins>) {
    let dir = tempfile::tempdir().expect("plugins");
    let bundle = dir.path().join("hostile");
    std::fs::create_dir_all(&bundle).expect("bundle");
    std::fs::write(
        bundle.join("plugin.toml"),
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n",
    )
    .expect("manifest");
    std::fs::copy(artifacts::HOSTILE, bundle.join("tool.wasm")).expect("component");
    let host = PluginHost::new(HostConfig::default()).expect("host");
    let report = host.load_dir(dir.path(), dir.path()).await.expect("load");
    assert!(report.errors.is_empty(), "{}", report.errors[0]);
    let plugins = host
        .plugins(report.bundles, Arc::new(EventLog::new()))
        .unwrap_or_else(|errors| panic!("{}", errors[0]));
    (dir, Arc::new(plugins))
}

/// A script whose first call activates skill `bench` when `activate`, or
/// else calls the tool like every later step, then [`STEPS`] steps of one
/// `hostile.echo` call each.
fn script(activate: bool) -> ScriptedModel {
    let mut text = String::new();
    text.push_str(if activate {
        "[[turn]]\n[[turn.call]]\ntool = \"skill\"\nargs = { name = \"bench\" }\n"
    } else {
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\nargs = { step = 0 }\n"
    });
    for step in 0..STEPS {
        text.push_str(&format!(
            "[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\nargs = {{ step = {step} }}\n"
        ));
    }
    text.push_str("[[turn]]\ntext = \"done\"\n");
    ScriptedModel::parse(Path::new("bench.toml"), &text).expect("script")
}

async fn active_skill_step() {
    let (_plugins_dir, plugins) = echo_plugins().await;
    let skills = tempfile::tempdir().expect("skills");
    let folder = skills.path().join("bench");
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::write(
        folder.join("SKILL.md"),
        skill_md("bench").replace("bench/*", "hostile.*"),
    )
    .expect("SKILL.md");
    let discovered = discover(&[Root {
        source: Source::Flag,
        dir: folder,
    }]);
    let catalog = Arc::new(Catalog::of(&discovered));
    let tool: Arc<dyn ToolSet> = Arc::new(SkillTool::new(catalog, false, BTreeMap::new()));
    let tools: Arc<dyn ToolSet> =
        Arc::new(ToolSets::new(vec![tool, plugins]).unwrap_or_else(|twice| panic!("{twice:?}")));
    let agent = AgentDef::new(
        "bench",
        "",
        &["*"],
        u32::try_from(STEPS + 3).expect("steps"),
        PermissionPolicy::new(Verdict::Allow),
    )
    .expect("agent");
    let events = Arc::new(EventLog::new());
    let mut times: BTreeMap<bool, Vec<Duration>> = BTreeMap::new();
    for round in 0..ROUNDS {
        for activate in [false, true] {
            let store = Arc::new(MemoryCommitStore::new());
            let runtime = Runtime::new(
                Arc::new(script(activate)),
                tools.clone(),
                store.clone(),
                events.clone(),
            );
            let started = Instant::now();
            runtime
                .start(&agent, &format!("run-{round}-{activate}"), 0, "go")
                .await
                .expect("run");
            let per_step = started.elapsed() / u32::try_from(STEPS + 1).expect("steps");
            times.entry(activate).or_default().push(per_step);
        }
    }
    let (without, with) = (median(&times[&false]), median(&times[&true]));
    println!(
        "loop step with a skill active (five allowed-tools rules judged per call): {:.1} us; with none {:.1} us; \
         with/without = {:.2}",
        us(with),
        us(without),
        with.as_secs_f64() / without.as_secs_f64()
    );
}

fn python_bundle() -> PathBuf {
    let bundle = built_bundle(artifacts::PLUGINS_DIR, "python");
    assert!(
        bundle.join("python.wasm").is_file(),
        "build the interpreter with `cordon build plugins/python`"
    );
    bundle
}

async fn interpreter_load() {
    let bundle = python_bundle();
    let cache = tempfile::tempdir().expect("cache");
    let workspace = tempfile::tempdir().expect("workspace");
    let host = || {
        PluginHost::new(HostConfig {
            cache: Some(cordon_tests::cache_in(cache.path())),
            ..HostConfig::default()
        })
        .expect("host")
    };
    let started = Instant::now();
    let cold = host()
        .load_bundle(&bundle, workspace.path())
        .await
        .expect("cold load");
    let compiled = started.elapsed();
    assert_eq!(cold.cache, CacheOutcome::Compiled);
    let mut cached = Vec::new();
    for _ in 0..5 {
        let warm = host();
        let started = Instant::now();
        let loaded = warm
            .load_bundle(&bundle, workspace.path())
            .await
            .expect("cached load");
        cached.push(started.elapsed());
        assert_eq!(loaded.cache, CacheOutcome::Hit);
    }
    let cached = median(&cached);
    println!(
        "the Python interpreter ({:.1} MB): compiled load {:.0} ms, cached load {:.1} ms; cached/compiled = {:.3}",
        std::fs::metadata(bundle.join("python.wasm"))
            .expect("size")
            .len() as f64
            / 1e6,
        ms(compiled),
        ms(cached),
        cached.as_secs_f64() / compiled.as_secs_f64()
    );
}

/// A small script of the kind a skill ships: sum a CSV column.
const SUM: &str = "import csv, sys\n\
    rows = list(csv.DictReader(open(sys.argv[1])))\n\
    print(sum(int(row['units']) for row in rows))\n";

async fn script_runs() {
    let bundle = python_bundle();
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let rig = Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        let to = fixture.plugins.path().join("python");
        std::fs::create_dir_all(&to).expect("python bundle");
        for file in ["plugin.toml", "python.wasm"] {
            std::fs::copy(bundle.join(file), to.join(file)).expect("copy");
        }
        fixture.bundled_plugin(
            "node",
            &built_bundle(artifacts::PLUGINS_DIR, "node").join("node.wasm"),
        );
        let workspace = fixture.workspace.path();
        std::fs::write(workspace.join("sum.py"), SUM).expect("script");
        std::fs::write(workspace.join("sum.js"), SUM_JS).expect("script");
        std::fs::write(
            workspace.join("data.csv"),
            "region,units\nnorth,120\nsouth,95\n",
        )
        .expect("data");
    })
    .await;
    let timed = |line: &'static str, expected: &'static str| {
        let rig = &rig;
        async move {
            let mut times = Vec::new();
            for round in 0..(ROUNDS * 3) {
                let started = Instant::now();
                let (code, out, err) = rig.sh(line).await;
                if round > 1 {
                    times.push(started.elapsed());
                }
                assert_eq!((code, out.trim()), (0, expected), "{line}: {err}");
            }
            median(&times)
        }
    };
    let echo = timed("echo 215", "215").await;
    let inline = timed("python3 -c 'print(215)'", "215").await;
    let script = timed("python3 sum.py data.csv", "215").await;
    let node_inline = timed("node -e 'console.log(215)'", "215").await;
    let node_script = timed("node sum.js data.csv", "215").await;
    let native = native_median("python3", &["-S", "-c", "print(215)"]);
    let native_node = native_median("node", &["-e", "console.log(215)"]);
    println!(
        "bash `echo` (a fresh backend instance): {:.2} ms; `python3 -c` through it (and a fresh interpreter): {:.2} ms; \
         `python3 sum.py data.csv`: {:.2} ms; python3/echo = {:.1}, script/echo = {:.1}",
        ms(echo),
        ms(inline),
        ms(script),
        inline.as_secs_f64() / echo.as_secs_f64(),
        script.as_secs_f64() / echo.as_secs_f64()
    );
    if let Some(native) = native {
        println!(
            "the machine's own `python3 -S -c` as a process: {:.2} ms; sandboxed/native = {:.2}",
            ms(native),
            inline.as_secs_f64() / native.as_secs_f64()
        );
    }
    println!(
        "`node -e` through bash (a fresh QuickJS interpreter): {:.2} ms; `node sum.js data.csv`: {:.2} ms; \
         node/echo = {:.1}, script/echo = {:.1}",
        ms(node_inline),
        ms(node_script),
        node_inline.as_secs_f64() / echo.as_secs_f64(),
        node_script.as_secs_f64() / echo.as_secs_f64()
    );
    if let Some(native) = native_node {
        println!(
            "the machine's own `node -e` as a process: {:.2} ms; sandboxed/native = {:.2}",
            ms(native),
            node_inline.as_secs_f64() / native.as_secs_f64()
        );
    }
}

const SUM_JS: &str = "const rows = require('fs').readFileSync(process.argv[2], 'utf8').trim().split('\\n').slice(1);\n\
    console.log(rows.reduce((sum, row) => sum + Number(row.split(',')[1]), 0));\n";

/// The median time of the machine's own `program ARGS` as a process, when
/// the machine has it.
fn native_median(program: &str, args: &[&str]) -> Option<Duration> {
    let mut times = Vec::new();
    for _ in 0..(ROUNDS * 3) {
        let started = Instant::now();
        match Command::new(program).args(args).output() {
            Ok(output) if output.status.success() => times.push(started.elapsed()),
            _ => return None,
        }
    }
    Some(median(&times))
}
