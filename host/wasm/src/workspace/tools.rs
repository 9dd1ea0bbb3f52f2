//! The neutral built-in tools, `read`, `write`, `edit`, `glob`, `grep` and
//! `bash`: thin adapters from a model's JSON arguments to the `workspace`
//! interface of whichever backend the run is bound to. Their names and
//! schemas are stable, so an agent behaves the same on every backend; their
//! annotations (read-only or destructive) are what permission rules such as
//! `@read-only` match.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cordon_kernel::{
    CallContext, Capability, FileAccess, FileWrites, LimitKind, ToolAnnotations, ToolCallOutcome,
    ToolError, ToolErrorKind, ToolFuture, ToolOutput, ToolSet, ToolSpec,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::audit::Audit;
use crate::bindings::workspace as wit;
use crate::capabilities::dirs::{DirMode, ResolvedDir};
use cordon_kernel::schema_problems;

use super::backend::{Backend, Invoke, invoke};
use super::paths::{
    PACKAGES_ROOT, SKILLS_ROOT, is_malformed, mount_of, normalize, resolve_mounted,
};

/// How many grep matches a call returns unless it asks for fewer.
const DEFAULT_MAX_MATCHES: u32 = 200;
/// Time kept back from the bundle's limit, so a command's own time limit
/// fires first and its output survives.
const COMMAND_GRACE_MS: u64 = 500;

/// The built-in tools of one bound workspace.
pub struct WorkspaceTools {
    backend: Backend,
    tools: Vec<Tool>,
    /// The folders of the run's skills, canonical, by skill: each is mounted
    /// read-only at `/skills/NAME` for the calls made while it is active.
    skills: BTreeMap<String, PathBuf>,
    /// The package folders of the skills with approved packages, by skill:
    /// each is mounted read-only at `/packages/NAME` while its skill is
    /// active.
    packages: BTreeMap<String, PathBuf>,
}

struct Tool {
    spec: ToolSpec,
    validator: jsonschema::Validator,
}

impl WorkspaceTools {
    pub(crate) fn new(backend: Backend) -> Self {
        let tools = specs()
            .into_iter()
            .map(|spec| {
                let validator = jsonschema::validator_for(&spec.input_schema)
                    .unwrap_or_else(|error| panic!("built-in schema of {}: {error}", spec.name));
                Tool { spec, validator }
            })
            .collect();
        Self {
            backend,
            tools,
            skills: BTreeMap::new(),
            packages: BTreeMap::new(),
        }
    }

    /// These tools with the run's skills' `folders` and `packages` folders,
    /// by skill.
    pub(crate) fn with_skills(
        mut self,
        folders: BTreeMap<String, PathBuf>,
        packages: BTreeMap<String, PathBuf>,
    ) -> Self {
        self.skills = folders;
        self.packages = packages;
        self
    }

    /// The backend.
    pub(crate) fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The folders a call made while `active` are active sees at
    /// `/skills/NAME`, read-only.
    fn mounts(&self, active: &cordon_kernel::ActiveSkills) -> Vec<ResolvedDir> {
        active
            .names()
            .into_iter()
            .flat_map(|name| {
                let folder = self.skills.get(&name).map(|host| ResolvedDir {
                    host: host.clone(),
                    guest: format!("{SKILLS_ROOT}/{name}"),
                    mode: DirMode::Ro,
                });
                let packages = self.packages.get(&name).map(|host| ResolvedDir {
                    host: host.clone(),
                    guest: format!("{PACKAGES_ROOT}/{name}"),
                    mode: DirMode::Ro,
                });
                folder.into_iter().chain(packages)
            })
            .collect()
    }

    async fn dispatch(
        &self,
        call: &mut Request<'_>,
        name: &str,
        args: Value,
    ) -> Result<Value, ToolError> {
        match name {
            "read" => self.read(call, parse(args)?).await,
            "write" => self.write(call, parse(args)?).await,
            "edit" => self.edit(call, parse(args)?).await,
            "glob" => self.glob(call, parse(args)?).await,
            "grep" => self.grep(call, parse(args)?).await,
            "bash" => self.bash(call, parse(args)?).await,
            other => Err(ToolError::new(
                ToolErrorKind::NotFound,
                format!("no tool named `{other}`"),
            )),
        }
    }

    /// `path` normalized and allowed `access` by the run's file rules, or a
    /// refusal the trail records. The backend's file layer enforces the
    /// same rules; judging here first names the rule to the model.
    fn path(
        &self,
        call: &Request<'_>,
        path: &str,
        access: FileAccess,
    ) -> Result<String, ToolError> {
        let refuse = |reason: String| {
            call.deny(path, &reason);
            ToolError::new(ToolErrorKind::Denied, reason)
        };
        if path.starts_with('/') {
            return self.mounted_path(call, path, access).map_err(refuse);
        }
        let normalized = normalize(path).map_err(|error| refuse(error.to_string()))?;
        let landing = if normalized.is_empty() {
            self.backend.base.clone()
        } else {
            self.backend.base.join(&normalized)
        };
        self.backend
            .guard
            .check(&landing, access)
            .map_err(|refused| refuse(refused.0))?;
        Ok(normalized)
    }

    /// `path`, absolute, normalized when it lies in the folder of a skill
    /// the call sees mounted and `access` only reads; otherwise why not.
    fn mounted_path(
        &self,
        call: &Request<'_>,
        path: &str,
        access: FileAccess,
    ) -> Result<String, String> {
        let normalized = resolve_mounted("", path).map_err(|error| error.to_string())?;
        let Some((skill, _)) = mount_of(&normalized) else {
            return Err(format!("{path}: absolute paths are outside the workspace"));
        };
        if !call
            .mounts
            .iter()
            .any(|dir| mount_of(&dir.guest).is_some_and(|(name, _)| name == skill))
        {
            return Err(format!(
                "{path}: skill `{skill}` is not active, so its folder is not mounted"
            ));
        }
        if access == FileAccess::Write {
            return Err(format!("{path}: a skill's folder is read-only"));
        }
        Ok(normalized)
    }

    async fn read(&self, call: &mut Request<'_>, args: ReadArgs) -> Result<Value, ToolError> {
        let path = self.path(call, &args.path, FileAccess::Read)?;
        let target = path.clone();
        let bytes = call.run("read", &target, invoke!(call_read(&path))).await?;
        let text = String::from_utf8(bytes).map_err(|error| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "{} is not UTF-8 text ({} bytes); inspect it with `bash`",
                    args.path,
                    error.as_bytes().len()
                ),
            )
        })?;
        if args.offset.is_none() && args.limit.is_none() {
            return Ok(json!({ "path": args.path, "content": text }));
        }
        let first = args.offset.unwrap_or(1).max(1);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let start = usize::try_from(first - 1)
            .unwrap_or(usize::MAX)
            .min(lines.len());
        let count = args.limit.map_or(usize::MAX, |limit| {
            usize::try_from(limit).unwrap_or(usize::MAX)
        });
        let end = start.saturating_add(count).min(lines.len());
        Ok(json!({
            "path": args.path,
            "content": lines[start..end].concat(),
            "first_line": start + 1,
            "total_lines": lines.len(),
        }))
    }

    async fn write(&self, call: &mut Request<'_>, args: WriteArgs) -> Result<Value, ToolError> {
        let path = self.path(call, &args.path, FileAccess::Write)?;
        let bytes = args.content.into_bytes();
        let len = bytes.len();
        let target = path.clone();
        call.run("write", &target, invoke!(call_write(&path, &bytes)))
            .await?;
        Ok(json!({ "path": args.path, "bytes": len }))
    }

    async fn edit(&self, call: &mut Request<'_>, args: EditArgs) -> Result<Value, ToolError> {
        let path = self.path(call, &args.path, FileAccess::Write)?;
        let target = path.clone();
        let (old, new) = (args.old_string, args.new_string);
        call.run("edit", &target, invoke!(call_edit(&path, &old, &new)))
            .await?;
        Ok(json!({ "path": args.path, "replaced": 1 }))
    }

    async fn glob(&self, call: &mut Request<'_>, args: GlobArgs) -> Result<Value, ToolError> {
        let mounted = args.pattern.starts_with('/')
            && mount_of(&args.pattern).is_some_and(|(skill, _)| {
                call.mounts
                    .iter()
                    .any(|dir| mount_of(&dir.guest).is_some_and(|(name, _)| name == skill))
            });
        if (args.pattern.starts_with('/') && !mounted)
            || args.pattern.split('/').any(|part| part == "..")
            || is_malformed(&args.pattern)
        {
            let reason = format!(
                "{:?} leaves the workspace or is no workspace path",
                args.pattern
            );
            call.deny(&args.pattern, &reason);
            return Err(ToolError::new(ToolErrorKind::Denied, reason));
        }
        let pattern = args.pattern.clone();
        let entries = call
            .run("glob", &args.pattern, invoke!(call_glob(&pattern)))
            .await?;
        let files: Vec<String> = entries.into_iter().map(|entry| entry.path).collect();
        Ok(json!({ "files": files }))
    }

    async fn grep(&self, call: &mut Request<'_>, args: GrepArgs) -> Result<Value, ToolError> {
        let path = self.path(call, args.path.as_deref().unwrap_or("."), FileAccess::Read)?;
        let query = wit::GrepQuery {
            pattern: args.pattern,
            path: path.clone(),
            file_glob: args.glob,
            case_insensitive: args.case_insensitive,
            max_matches: args.max_matches.unwrap_or(DEFAULT_MAX_MATCHES),
        };
        let found = call.run("grep", &path, invoke!(call_grep(&query))).await?;
        let matches: Vec<Value> = found
            .matches
            .into_iter()
            .map(|found| json!({ "path": found.path, "line": found.line, "text": found.text }))
            .collect();
        Ok(json!({ "matches": matches, "truncated": found.truncated }))
    }

    async fn bash(&self, call: &mut Request<'_>, args: BashArgs) -> Result<Value, ToolError> {
        let cwd = self.path(call, args.cwd.as_deref().unwrap_or("."), FileAccess::Read)?;
        let most = u64::try_from(self.backend.timeout().as_millis())
            .unwrap_or(u64::MAX)
            .saturating_sub(COMMAND_GRACE_MS)
            .max(1);
        let timeout = args.timeout_ms.map_or(most, |asked| asked.clamp(1, most));
        let command = wit::Command {
            line: args.command,
            cwd: cwd.clone(),
            env: args.env.into_iter().collect(),
            stdin: args.stdin.unwrap_or_default().into_bytes(),
            timeout_ms: u32::try_from(timeout).unwrap_or(u32::MAX),
        };
        let done = call.run("exec", &cwd, invoke!(call_exec(&command))).await?;
        if let Some(stopped) = &done.stopped {
            let limit = match stopped.limit {
                wit::ShellLimit::Time => LimitKind::Timeout,
                wit::ShellLimit::Commands | wit::ShellLimit::Nesting => LimitKind::Shell,
            };
            call.audit.reached("exec", limit, stopped.detail.clone());
        }
        Ok(json!({
            "exit_code": done.exit_code,
            "stdout": String::from_utf8_lossy(&done.stdout),
            "stderr": String::from_utf8_lossy(&done.stderr),
            "stdout_truncated": done.stdout_truncated,
            "stderr_truncated": done.stderr_truncated,
        }))
    }
}

impl ToolSet for WorkspaceTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|tool| tool.spec.clone()).collect()
    }

    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let narrowed;
            let backend = match &context.rules {
                None => &self.backend,
                Some(rules) => {
                    narrowed = self.backend.narrowed(rules);
                    &narrowed
                }
            };
            let mut call = Request {
                backend,
                audit: self.backend.audit(),
                view: context.files,
                files: FileWrites::new(),
                mounts: self.mounts(&context.skills).into(),
            };
            let result = match self.tools.iter().find(|tool| tool.spec.name == name) {
                None => Err(ToolError::new(
                    ToolErrorKind::NotFound,
                    format!("no tool named `{name}`"),
                )),
                Some(tool) => match schema_problems(&tool.validator, &args) {
                    Some(problems) => Err(ToolError::new(
                        ToolErrorKind::InvalidInput,
                        format!("arguments do not match the schema of `{name}`: {problems}"),
                    )),
                    None => self.dispatch(&mut call, name, args).await,
                },
            };
            let files = if result.is_ok() {
                call.files
            } else {
                FileWrites::new()
            };
            ToolCallOutcome {
                result: result.map(ToolOutput::new),
                writes: Vec::new(),
                files,
                skills: Vec::new(),
                events: call.audit.take(),
            }
        })
    }
}

/// One call of a built-in tool: its trail, the changes of the calls
/// enclosing it, which it sees over the committed ones, and the file changes
/// its operation staged.
struct Request<'a> {
    backend: &'a Backend,
    audit: Audit,
    view: Arc<FileWrites>,
    files: FileWrites,
    /// The folders of the skills active for this call, mounted read-only.
    mounts: Arc<[ResolvedDir]>,
}

impl Request<'_> {
    /// Run the backend's operation `op` on `target` by `invoke`, keeping the
    /// changes it staged.
    async fn run<T: Send + 'static>(
        &mut self,
        op: &str,
        target: &str,
        invoke: Invoke<T>,
    ) -> Result<T, ToolError> {
        let (value, files) = self
            .backend
            .run(
                &self.audit,
                Arc::clone(&self.view),
                Arc::clone(&self.mounts),
                op,
                target,
                invoke,
            )
            .await?;
        self.files.extend(files);
        Ok(value)
    }

    /// Record a refusal of `target` in the trail.
    fn deny(&self, target: &str, reason: &str) {
        self.audit.deny(Capability::Filesystem, target, reason);
    }
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|error| ToolError::new(ToolErrorKind::InvalidInput, error.to_string()))
}

#[derive(Deserialize)]
struct ReadArgs {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
struct EditArgs {
    path: String,
    old_string: String,
    new_string: String,
}

#[derive(Deserialize)]
struct GlobArgs {
    pattern: String,
}

#[derive(Deserialize)]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
    max_matches: Option<u32>,
}

#[derive(Deserialize)]
struct BashArgs {
    command: String,
    cwd: Option<String>,
    stdin: Option<String>,
    timeout_ms: Option<u64>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
}

const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

const DESTRUCTIVE: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};

/// The built-in tools' specs, in a stable order.
fn specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, schema: Value, annotations| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: Arc::new(schema),
        output_schema: None,
        annotations,
    };
    vec![
        spec(
            "read",
            "Read a UTF-8 text file of the workspace. Paths are relative to the workspace root. `offset` (1-based first line) and `limit` (line count) read part of a long file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to the workspace root."},
                    "offset": {"type": "integer", "minimum": 1},
                    "limit": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            READ_ONLY,
        ),
        spec(
            "write",
            "Create or replace a file of the workspace with `content`, creating missing parent directories.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
            ToolAnnotations {
                idempotent: true,
                ..DESTRUCTIVE
            },
        ),
        spec(
            "edit",
            "Replace the one occurrence of `old_string` with `new_string` in a file; fails if it occurs zero or several times.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_string": {"type": "string", "minLength": 1},
                    "new_string": {"type": "string"}
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
            DESTRUCTIVE,
        ),
        spec(
            "glob",
            "List the workspace's files matching a glob such as `src/**/*.rs`, in path order.",
            json!({
                "type": "object",
                "properties": {"pattern": {"type": "string", "minLength": 1}},
                "required": ["pattern"],
                "additionalProperties": false
            }),
            READ_ONLY,
        ),
        spec(
            "grep",
            "Search the workspace's text files for a regular expression. Returns matching lines with their paths and 1-based line numbers.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "minLength": 1},
                    "path": {"type": "string", "description": "File or directory to search; the root by default."},
                    "glob": {"type": "string", "description": "Only files whose path matches this glob."},
                    "case_insensitive": {"type": "boolean"},
                    "max_matches": {"type": "integer", "minimum": 1}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            READ_ONLY,
        ),
        spec(
            "bash",
            "Run a command line in the workspace's sandboxed shell: pipelines, &&, ||, ;, quoting, redirects (> >> <) and ls, cat, head, tail, wc, grep, find, sort, uniq, cut, sed, echo, mkdir, rm, mv, cp, touch, pwd, cd. Nothing runs on the host; other programs do not exist.",
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "minLength": 1},
                    "cwd": {"type": "string", "description": "Working directory relative to the workspace root."},
                    "stdin": {"type": "string"},
                    "timeout_ms": {"type": "integer", "minimum": 1},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
            DESTRUCTIVE,
        ),
    ]
}
