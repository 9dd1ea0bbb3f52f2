//! A skill's Python packages as an operator meets them: `cordon skills
//! approve` shows each pin with its wheel and SHA-256, fetches and unpacks
//! it read-only once approved, and the skill's script imports it in the
//! sandbox; a package with native wheels only, one published only as a
//! source archive (whose install hook would run), one whose bytes changed,
//! and one whose wheel reaches out of its folder are refused before anything
//! runs; a package trying `ctypes`, `subprocess` or `socket`, or a script
//! writing into its package folder, is refused inside the sandbox. The index
//! is a server on loopback speaking PyPI's JSON API.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Cursor, Write};
use std::net::TcpListener;
use std::sync::Arc;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{Project, both, text};

/// A wheel holding `files`.
fn wheel(files: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, contents) in files {
        writer
            .start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(contents.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A file of a release: its name, the bytes served, and the SHA-256 the
/// index announces when it is not theirs.
type ReleaseFile<'a> = (&'a str, Vec<u8>, Option<String>);

/// A release: the package, its version, its files.
type Release<'a> = (&'a str, &'a str, Vec<ReleaseFile<'a>>);

/// A package index on loopback: each release's JSON and each file, by path.
struct Index {
    url: String,
}

impl Index {
    /// Serves `releases`.
    fn serve(releases: &[Release]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let mut routes: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (name, version, files) in releases {
            let urls: Vec<Value> = files
                .iter()
                .map(|(file, bytes, announced)| {
                    routes.insert(format!("/files/{file}"), bytes.clone());
                    json!({
                        "filename": file,
                        "url": format!("{base}/files/{file}"),
                        "packagetype": if file.ends_with(".whl") { "bdist_wheel" } else { "sdist" },
                        "digests": {"sha256": announced.clone().unwrap_or_else(|| hex::encode(Sha256::digest(bytes)))},
                    })
                })
                .collect();
            routes.insert(
                format!("/pypi/{name}/{version}/json"),
                serde_json::to_vec(&json!({ "urls": urls })).unwrap(),
            );
        }
        let routes = Arc::new(routes);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let routes = Arc::clone(&routes);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request = String::new();
                    reader.read_line(&mut request).unwrap_or_default();
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                            break;
                        }
                    }
                    let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let (status, body) = match routes.get(&path) {
                        Some(body) => ("200 OK", body.clone()),
                        None => ("404 Not Found", b"not found".to_vec()),
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&body);
                });
            }
        });
        Self {
            url: format!("{base}/pypi"),
        }
    }
}

/// A project with the `dir` backend and the Python interpreter, whose skill
/// `greeter` needs `requirements`.
fn project(requirements: &str) -> Project {
    let project = Project::new();
    project.bundled("dir", cordon_test_artifacts::DIR);
    let python =
        std::path::Path::new(cordon_test_artifacts::PLUGINS_DIR).join("python/python.wasm");
    project.bundled("python", python.to_str().unwrap());
    project.write(
        "skills/greeter/SKILL.md",
        "---\nname: greeter\ndescription: Greets with the greet package.\n---\nRun scripts/hello.py.\n",
    );
    project.write("skills/greeter/requirements.txt", requirements);
    project.write(
        "agent.toml",
        "name = \"greeter\"\nsandbox = \"dir\"\nskills = [\"skills\"]\n[permissions]\ndefault = \"allow\"\n",
    );
    project
}

/// `cordon args` against `index`.
fn cordon(project: &Project, index: &Index, args: &[&str]) -> std::process::Output {
    project
        .command(args)
        .env("HOME", project.home())
        .env("CORDON_PACKAGE_INDEX", &index.url)
        .output()
        .expect("run cordon")
}

/// `cordon skills approve SKILL --agent agent.toml` with `more` arguments.
fn approve(project: &Project, index: &Index, skill: &str, more: &[&str]) -> std::process::Output {
    let mut args = vec!["skills", "approve", skill, "--agent", "agent.toml"];
    args.extend_from_slice(more);
    cordon(project, index, &args)
}

fn greet_wheel() -> Vec<u8> {
    wheel(&[
        (
            "greet/__init__.py",
            "def hi():\n    return 'hi from greet'\n",
        ),
        (
            "greet-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: greet\nVersion: 1.0\n",
        ),
    ])
}

/// A package that tries, inside the sandbox, what a script must not do.
fn sneaky_wheel() -> Vec<u8> {
    wheel(&[(
        "sneaky/__init__.py",
        "def try_all(port):\n    tried = []\n    for name, attempt in [\n        ('ctypes', lambda: __import__('ctypes').CDLL(None)),\n        ('subprocess', lambda: __import__('subprocess').run(['ls'])),\n        ('socket', lambda: __import__('socket').create_connection(('127.0.0.1', port), timeout=2)),\n    ]:\n        try:\n            attempt()\n            tried.append(name + ' ran')\n        except BaseException as error:\n            tried.append(name + ' refused')\n    return ' '.join(tried)\n",
    )])
}

#[test]
fn a_skills_packages_are_approved_fetched_and_imported_by_its_script_in_the_sandbox() {
    let greet = greet_wheel();
    let greet_hash = hex::encode(Sha256::digest(&greet));
    let index = Index::serve(&[
        (
            "greet",
            "1.0",
            vec![("greet-1.0-py3-none-any.whl", greet, None)],
        ),
        (
            "sneaky",
            "1.0",
            vec![("sneaky-1.0-py3-none-any.whl", sneaky_wheel(), None)],
        ),
    ]);
    let project = project("greet==1.0\nsneaky==1.0\n");
    // A second skill with packages of its own, active beside the first,
    // listing them in its SKILL.md rather than in a requirements.txt.
    project.write(
        "skills/neighbour/SKILL.md",
        "---\nname: neighbour\ndescription: Also greets.\nmetadata:\n  python-requirements: greet==1.0\n---\nUse greet.\n",
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    project.write(
        "skills/greeter/scripts/hello.py",
        &format!(
            "import greet, sneaky\nprint(greet.hi(), greet.__file__)\nprint(sneaky.try_all({port}))\n"
        ),
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"skill\"\nargs = { name = \"greeter\" }\n\
         [[turn.call]]\ntool = \"skill\"\nargs = { name = \"neighbour\" }\n\
         [[turn]]\n[[turn.call]]\ntool = \"bash\"\nargs = { command = \"python3 /skills/greeter/scripts/hello.py; for skill in greeter neighbour; do python3 -c \\\"open('/packages/$skill/greet/__init__.py', 'w')\\\" 2>&1 | tail -n 1; done\" }\n\
         [[turn]]\ntext = \"Done.\"\n",
    );
    let run = |id: &str| {
        cordon(
            &project,
            &index,
            &[
                "run",
                "--agent",
                "agent.toml",
                "--model",
                "scripted:script.toml",
                "--run-id",
                id,
                "--json",
                "go",
            ],
        )
    };

    // Unapproved, the run says so, the activation tells the model before
    // any script runs, and the script cannot import.
    let before = run("before");
    assert!(before.status.success(), "{}", both(&before));
    assert!(
        text(&before.stdout).contains("Its Python packages are not available in this run"),
        "{}",
        both(&before)
    );
    assert!(
        both(&before).contains(
            "skill `greeter` needs Python packages the operator has not approved (greet==1.0 sneaky==1.0)"
        ),
        "{}",
        both(&before)
    );

    let listed = cordon(
        &project,
        &index,
        &["skills", "list", "--agent", "agent.toml"],
    );
    assert!(
        text(&listed.stdout).contains(
            "  python packages: skill `greeter` needs Python packages the operator has not approved"
        ),
        "{}",
        both(&listed)
    );

    // Shown with their wheels and hashes; not on a terminal, not approved.
    let shown = approve(&project, &index, "greeter", &[]);
    assert_eq!(shown.status.code(), Some(2), "{}", both(&shown));
    let listed = text(&shown.stdout);
    assert!(
        listed.contains(&format!(
            "greet==1.0  greet-1.0-py3-none-any.whl  sha256:{greet_hash}"
        )),
        "{listed}"
    );
    assert!(
        text(&shown.stderr).contains("approve with --yes"),
        "{}",
        both(&shown)
    );
    assert!(!project.path(".cordon/packages.toml").exists());

    let approved = approve(&project, &index, "greeter", &["--yes"]);
    assert!(approved.status.success(), "{}", both(&approved));
    let recorded = project.read(".cordon/packages.toml").unwrap();
    assert!(recorded.contains(&greet_hash), "{recorded}");
    assert!(
        recorded.contains("sneaky-1.0-py3-none-any.whl"),
        "{recorded}"
    );

    let listed = cordon(
        &project,
        &index,
        &["skills", "list", "--agent", "agent.toml"],
    );
    assert!(
        text(&listed.stdout).contains("  python packages: approved, in "),
        "{}",
        both(&listed)
    );
    let neighbour = approve(&project, &index, "neighbour", &["--yes"]);
    assert!(neighbour.status.success(), "{}", both(&neighbour));
    let after = run("after");
    assert!(after.status.success(), "{}", both(&after));
    let shown = project.show("after");
    let outputs: Vec<String> = shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().cloned().unwrap_or_default())
        .filter_map(|tool| {
            tool["result"]["output"]["stdout"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    let stdout = outputs.join("");
    assert!(
        stdout.contains("hi from greet /packages/greeter/greet/__init__.py"),
        "the script imports the approved package: {stdout}\n{shown}"
    );
    assert!(
        stdout.contains("ctypes refused subprocess refused socket refused"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|line| line.contains("Error")),
        "writing into the package folder fails: {stdout}"
    );
    let denied: Vec<String> = shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["events"].as_array().cloned().unwrap_or_default())
        .filter(|event| event["event"] == "denied")
        .map(|event| format!("{} {}", event["capability"], event["target"]))
        .collect();
    for skill in ["greeter", "neighbour"] {
        assert!(
            denied.contains(&format!(
                "\"filesystem\" \"/packages/{skill}/greet/__init__.py\""
            )),
            "the write into {skill}'s package folder is audited: {denied:?}"
        );
    }
    assert!(
        denied
            .iter()
            .any(|denial| denial.starts_with("\"network\"")),
        "the package's connection is audited: {denied:?}"
    );
    assert!(
        !denied.iter().any(|denial| denial.contains("__pycache__")),
        "imports write no bytecode caches: {denied:?}"
    );
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "no connection reached the host");
}

#[test]
fn packages_that_would_run_native_or_install_code_or_whose_bytes_changed_are_refused() {
    let good = greet_wheel();
    let slip = wheel(&[("../../escaped.py", "print('out')\n")]);
    let index = Index::serve(&[
        (
            "native",
            "2.0",
            vec![
                (
                    "native-2.0-cp312-cp312-manylinux_2_17_x86_64.whl",
                    b"elf".to_vec(),
                    None,
                ),
                ("native-2.0.tar.gz", b"source".to_vec(), None),
            ],
        ),
        (
            "hooked",
            "1.0",
            vec![(
                "hooked-1.0.tar.gz",
                b"setup.py would run here".to_vec(),
                None,
            )],
        ),
        (
            "changed",
            "1.0",
            vec![("changed-1.0-py3-none-any.whl", good, Some("00".repeat(32)))],
        ),
        (
            "slip",
            "1.0",
            vec![("slip-1.0-py3-none-any.whl", slip, None)],
        ),
    ]);
    for (pin, needle) in [
        ("native==2.0", "its wheels are built for native platforms"),
        (
            "hooked==1.0",
            "it publishes only a source archive (hooked-1.0.tar.gz)",
        ),
        ("changed==1.0", "was announced by the index; refused"),
        (
            "slip==1.0",
            "holds `../../escaped.py`, a path outside the package folder",
        ),
        ("absent==9.9", "it has no absent==9.9"),
    ] {
        let project = project(&format!("{pin}\n"));
        let output = approve(&project, &index, "greeter", &["--yes"]);
        assert_eq!(output.status.code(), Some(2), "{pin}: {}", both(&output));
        assert!(
            text(&output.stderr).contains(needle),
            "{pin}: {}",
            both(&output)
        );
        assert!(
            !project.path(".cordon/packages.toml").exists(),
            "{pin}: nothing is recorded"
        );
        assert!(!project.data_home().join("escaped.py").exists());
    }
    let bad_pin = project("pypdf>=5\n");
    let output = approve(&bad_pin, &index, "greeter", &["--yes"]);
    assert_eq!(output.status.code(), Some(2), "{}", both(&output));
    assert!(
        text(&output.stderr).contains("requirements.txt:1: `pypdf>=5` is not an exact pin"),
        "{}",
        both(&output)
    );
}

/// The skills in the style of published ones, and the wheels they need.
fn skills_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/skills")
}

/// A small Word file: content types, relationships and one paragraph.
fn report_docx() -> Vec<u8> {
    wheel(&[
        (
            "[Content_Types].xml",
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"xml\" ContentType=\"application/xml\"/></Types>",
        ),
        (
            "_rels/.rels",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/></Relationships>",
        ),
        (
            "word/document.xml",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body><w:p><w:r><w:t>Quarterly report</w:t></w:r></w:p></w:body></w:document>",
        ),
    ])
}

/// The files of a zip archive, by name, each with its contents.
fn entries(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|index| {
            let mut entry = archive.by_index(index).unwrap();
            let mut contents = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut contents).unwrap();
            (entry.name().to_owned(), contents)
        })
        .collect()
}

/// The inputs both sides start from.
fn inputs(folder: &std::path::Path) {
    std::fs::copy(
        skills_dir().join("fixtures/form.pdf"),
        folder.join("form.pdf"),
    )
    .unwrap();
    std::fs::write(
        folder.join("fields.json"),
        "{\"applicant_name\": \"Ada Lovelace\", \"city\": \"London\"}\n",
    )
    .unwrap();
    std::fs::write(folder.join("report.docx"), report_docx()).unwrap();
    std::fs::create_dir_all(folder.join("drafts/Bad_Skill")).unwrap();
    std::fs::write(
        folder.join("drafts/Bad_Skill/SKILL.md"),
        "---\nname: Bad_Skill\ndescription: A draft.\n---\n",
    )
    .unwrap();
}

/// The command lines of the skills' scripts, with `SKILLS` for where the
/// skills are.
const SCRIPTS: &[&str] = &[
    "python3 SKILLS/pdf-form/scripts/fill_form.py --list form.pdf",
    "python3 SKILLS/pdf-form/scripts/fill_form.py form.pdf fields.json filled.pdf",
    "python3 SKILLS/office-repack/scripts/unpack.py report.docx unpacked",
    "node SKILLS/office-repack/scripts/replace.js unpacked Quarterly Annual",
    "python3 SKILLS/office-repack/scripts/pack.py unpacked repacked.docx",
    "python3 SKILLS/skill-validator/scripts/quick_validate.py SKILLS/pdf-form",
    "python3 SKILLS/skill-validator/scripts/quick_validate.py drafts/Bad_Skill; echo \"exit $?\"",
];

/// PyYAML's wheel: native, for the machine's CPython; its pure-Python part
/// is what the sandbox takes.
const PYYAML_WHEEL: &str =
    "pyyaml-6.0.3-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl";

#[test]
fn published_style_skills_fill_a_pdf_form_repack_an_office_file_and_validate_a_skill_as_the_machines_python_does()
 {
    let wheels = skills_dir().join("wheels");
    let served: Vec<ReleaseFile> = [
        "pypdf-5.1.0-py3-none-any.whl",
        "defusedxml-0.7.1-py2.py3-none-any.whl",
        PYYAML_WHEEL,
    ]
    .into_iter()
    .map(|file| (file, std::fs::read(wheels.join(file)).unwrap(), None))
    .collect();
    let index = Index::serve(&[
        ("pypdf", "5.1.0", vec![served[0].clone()]),
        ("defusedxml", "0.7.1", vec![served[1].clone()]),
        ("pyyaml", "6.0.3", vec![served[2].clone()]),
    ]);

    // The machine's own Python, with the same wheels.
    let host = tempfile::tempdir().unwrap();
    let venv = host.path().join("venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .expect("python3 runs: the test compares the sandbox with the machine's Python");
    assert!(made.success());
    let installed = std::process::Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index", "--find-links"])
        .arg(&wheels)
        .args(["pypdf==5.1.0", "defusedxml==0.7.1", "PyYAML==6.0.3"])
        .status()
        .unwrap();
    assert!(installed.success(), "pip installs the vendored wheels");
    let theirs = host.path().join("work");
    std::fs::create_dir_all(&theirs).unwrap();
    inputs(&theirs);
    let skills = skills_dir().canonicalize().unwrap();
    let mut expected = Vec::new();
    for line in SCRIPTS {
        let line = line.replace("SKILLS", skills.to_str().unwrap());
        let output = std::process::Command::new("bash")
            .arg("-c")
            .arg(&line)
            .current_dir(&theirs)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", venv.join("bin").display()),
            )
            .output()
            .unwrap();
        assert!(output.status.success(), "{line}: {}", both(&output));
        expected.push(text(&output.stdout));
    }

    // The sandbox, in an agent run.
    let project = Project::new();
    project.bundled("dir", cordon_test_artifacts::DIR);
    let python =
        std::path::Path::new(cordon_test_artifacts::PLUGINS_DIR).join("python/python.wasm");
    project.bundled("python", python.to_str().unwrap());
    let node = std::path::Path::new(cordon_test_artifacts::PLUGINS_DIR).join("node/node.wasm");
    project.bundled("node", node.to_str().unwrap());
    for skill in ["pdf-form", "office-repack", "skill-validator"] {
        project.copy_folder(&skills.join(skill), &format!("skills/{skill}"));
    }
    project.write(
        "agent.toml",
        "name = \"clerk\"\nsandbox = \"dir\"\nskills = [\"skills\"]\n[permissions]\ndefault = \"allow\"\n",
    );
    inputs(&project.path(""));
    for skill in ["pdf-form", "office-repack"] {
        let approved = approve(&project, &index, skill, &["--yes"]);
        assert!(approved.status.success(), "{skill}: {}", both(&approved));
    }
    // PyYAML has native wheels only: refused whole, taken for its Python
    // files when the operator says so.
    let whole = approve(&project, &index, "skill-validator", &["--yes"]);
    assert_eq!(whole.status.code(), Some(2), "{}", both(&whole));
    assert!(
        text(&whole.stderr).contains("PyYAML==6.0.3 has no wheel the sandbox can run"),
        "{}",
        both(&whole)
    );
    let python_only = approve(
        &project,
        &index,
        "skill-validator",
        &["--python-only", "pyyaml", "--yes"],
    );
    assert!(python_only.status.success(), "{}", both(&python_only));
    assert!(
        text(&python_only.stdout)
            .contains("(its Python files only: its compiled modules are left out)"),
        "{}",
        both(&python_only)
    );
    let mut script = String::from(
        "[[turn]]\n[[turn.call]]\ntool = \"skill\"\nargs = { name = \"pdf-form\" }\n\
         [[turn.call]]\ntool = \"skill\"\nargs = { name = \"office-repack\" }\n\
         [[turn.call]]\ntool = \"skill\"\nargs = { name = \"skill-validator\" }\n",
    );
    for line in SCRIPTS {
        script.push_str(&format!(
            "[[turn]]\n[[turn.call]]\ntool = \"bash\"\nargs = {{ command = '{}' }}\n",
            line.replace("SKILLS", "/skills")
        ));
    }
    script.push_str("[[turn]]\ntext = \"Done.\"\n");
    project.write("script.toml", &script);
    let run = cordon(
        &project,
        &index,
        &[
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "scripted:script.toml",
            "--run-id",
            "clerk",
            "go",
        ],
    );
    assert!(run.status.success(), "{}", both(&run));
    let shown = project.show("clerk");
    let outputs: Vec<Value> = shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().cloned().unwrap_or_default())
        .filter(|tool| tool["call"]["name"] == "bash")
        .map(|tool| tool["result"]["output"].clone())
        .collect();
    assert_eq!(outputs.len(), SCRIPTS.len(), "{shown}");
    for ((line, output), expected) in SCRIPTS.iter().zip(&outputs).zip(&expected) {
        assert_eq!(output["exit_code"], 0, "{line}: {output}");
        assert_eq!(
            output["stdout"].as_str().unwrap(),
            expected,
            "{line}: {output}"
        );
    }

    // The files the scripts wrote, committed with their steps, are the
    // machine's Python's.
    let ours = project.path("");
    assert_eq!(
        std::fs::read(ours.join("filled.pdf")).unwrap(),
        std::fs::read(theirs.join("filled.pdf")).unwrap(),
        "the filled form"
    );
    let document = std::fs::read_to_string(ours.join("unpacked/word/document.xml")).unwrap();
    assert_eq!(
        document,
        std::fs::read_to_string(theirs.join("unpacked/word/document.xml")).unwrap(),
    );
    assert!(
        document.contains("Annual report"),
        "the Node script changed the run: {document}"
    );
    assert_eq!(
        entries(&std::fs::read(ours.join("repacked.docx")).unwrap()),
        entries(&std::fs::read(theirs.join("repacked.docx")).unwrap()),
        "the repacked file holds the same parts"
    );
}
