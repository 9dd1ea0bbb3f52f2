//! The rooms of a crate stay apart: no file of the kernel or of the wasm
//! host reaches, through
//! the modules it names (`crate::`, `super::`, `self::` and its own child
//! modules), a file that reaches it back over a circle of more than three
//! files. Files in one circle are one room in fact: none of them can be read,
//! changed or tested without the others. Test modules are left out; they may
//! name whatever they test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The largest circle a crate may hold.
const LARGEST: usize = 3;

/// Every module of the crate whose sources are under `src`, by module path.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut found = BTreeMap::new();
    let mut folders = vec![src.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read a source folder") {
            let path = entry.expect("read a source folder").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("under the source folder");
            let mut module: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            found.insert(module, path);
        }
    }
    found
}

/// The file of the longest module path that `path` begins with.
fn resolve<'a>(modules: &'a BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> &'a PathBuf {
    (0..=path.len())
        .rev()
        .find_map(|length| modules.get(&path[..length]))
        .expect("the crate root is a module")
}

fn is_identifier(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The module paths named by the path that starts at `text`: one, or one per
/// item of a `{...}` group.
fn named_paths(text: &str, prefix: Vec<String>) -> Vec<Vec<String>> {
    let mut path = prefix;
    let mut rest = text.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            return group_items(group)
                .into_iter()
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .flat_map(|item| match item {
                    "self" => vec![path.clone()],
                    item => named_paths(item, path.clone()),
                })
                .collect();
        }
        let length = rest.find(|c: char| !is_identifier(c)).unwrap_or(rest.len());
        if length == 0 {
            return vec![path];
        }
        path.push(rest[..length].to_owned());
        match rest[length..].strip_prefix("::") {
            Some(after) => rest = after,
            None => return vec![path],
        }
    }
}

/// The items of the `{...}` group whose text starts after its `{`, split at
/// its own commas.
fn group_items(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0_usize;
    let mut start = 0;
    for (index, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&text[start..index]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

/// The files `file`, the source of module `module`, names.
fn named_files(
    modules: &BTreeMap<Vec<String>, PathBuf>,
    file: &Path,
    module: &[String],
) -> BTreeSet<PathBuf> {
    let source = std::fs::read_to_string(file).expect("read a source file");
    let source = source.split("#[cfg(test)]").next().unwrap_or_default();
    let children: BTreeSet<&str> = source
        .lines()
        .filter_map(|line| {
            let declared = line.trim_start().trim_start_matches("pub(crate) ");
            let declared = declared.trim_start_matches("pub ");
            declared.strip_prefix("mod ")?.strip_suffix(';')
        })
        .collect();
    let mut named = BTreeSet::new();
    // The crate root declares the modules and re-exports their items for
    // other crates: it is the crate's front door, not a room of it.
    let root = &modules[&Vec::new()];
    let mut name = |path: Vec<String>| {
        let target = resolve(modules, &path);
        if target != file && target != root {
            named.insert(target.clone());
        }
    };
    for (at, _) in source.match_indices("::") {
        let before = &source[..at];
        let start = before
            .rfind(|c: char| !is_identifier(c))
            .map_or(0, |index| index + 1);
        let first = &before[start..];
        if source[..start].ends_with("::") {
            continue;
        }
        let base: Option<Vec<String>> = match first {
            "crate" => Some(Vec::new()),
            "self" => Some(module.to_vec()),
            "super" => {
                let mut parent = module.to_vec();
                parent.pop();
                let mut rest = &source[at + 2..];
                while let Some(after) = rest.strip_prefix("super::") {
                    parent.pop();
                    rest = after;
                }
                Some(parent)
            }
            child if children.contains(child) => {
                let mut path = module.to_vec();
                path.push(child.to_owned());
                Some(path)
            }
            _ => None,
        };
        if let Some(base) = base {
            let rest = source[at + 2..].trim_start_matches("super::");
            for path in named_paths(rest, base) {
                name(path);
            }
        }
    }
    named
}

/// The circles of the crate under `src` (strongly connected sets of files
/// that name one another), largest first.
fn circles(src: &Path) -> Vec<Vec<PathBuf>> {
    let modules = modules(src);
    let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = modules
        .iter()
        .map(|(module, file)| (file.clone(), named_files(&modules, file, module)))
        .collect();
    let mut found = Tarjan::default().run(&graph);
    found.sort_by_key(|circle| std::cmp::Reverse(circle.len()));
    found
        .into_iter()
        .map(|circle| {
            circle
                .into_iter()
                .map(|file| file.strip_prefix(src).unwrap_or(&file).to_owned())
                .collect()
        })
        .collect()
}

/// Tarjan's strongly connected components.
#[derive(Default)]
struct Tarjan {
    index: BTreeMap<PathBuf, usize>,
    low: BTreeMap<PathBuf, usize>,
    stack: Vec<PathBuf>,
    on_stack: BTreeSet<PathBuf>,
    found: Vec<Vec<PathBuf>>,
}

impl Tarjan {
    fn run(mut self, graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
        for file in graph.keys() {
            if !self.index.contains_key(file) {
                self.visit(graph, file);
            }
        }
        self.found
    }

    fn visit(&mut self, graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>, file: &Path) {
        let number = self.index.len();
        self.index.insert(file.to_owned(), number);
        self.low.insert(file.to_owned(), number);
        self.stack.push(file.to_owned());
        self.on_stack.insert(file.to_owned());
        for next in graph.get(file).into_iter().flatten() {
            if !self.index.contains_key(next) {
                self.visit(graph, next);
                let low = self.low[file].min(self.low[next]);
                self.low.insert(file.to_owned(), low);
            } else if self.on_stack.contains(next) {
                let low = self.low[file].min(self.index[next]);
                self.low.insert(file.to_owned(), low);
            }
        }
        if self.low[file] == self.index[file] {
            let mut circle = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack.remove(&member);
                let last = member == file;
                circle.push(member);
                if last {
                    break;
                }
            }
            self.found.push(circle);
        }
    }
}

fn source_of(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests folder lies in the repository")
        .join(krate)
        .join("src")
}

/// Fail naming every circle of the crate larger than [`LARGEST`].
fn assert_no_large_circle(krate: &str) {
    let large: Vec<String> = circles(&source_of(krate))
        .into_iter()
        .filter(|circle| circle.len() > LARGEST)
        .map(|circle| {
            let files: Vec<String> = circle
                .iter()
                .map(|file| file.display().to_string())
                .collect();
            format!("{} files: {}", files.len(), files.join(", "))
        })
        .collect();
    assert!(
        large.is_empty(),
        "{krate} has circles of more than {LARGEST} files:\n{}",
        large.join("\n")
    );
}

#[test]
fn the_kernel_has_no_circle_of_more_than_three_files() {
    assert_no_large_circle("host/kernel");
}

#[test]
fn the_wasm_host_has_no_circle_of_more_than_three_files() {
    assert_no_large_circle("host/wasm");
}

#[test]
fn a_circle_is_found_through_crate_super_and_child_module_paths() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let src = folder.path();
    std::fs::create_dir(src.join("room")).expect("a module folder");
    let write = |path: &str, text: &str| std::fs::write(src.join(path), text).expect("write");
    write("lib.rs", "mod room;\nmod hall;\nmod alone;\n");
    write("room/mod.rs", "mod door;\nuse door::Handle;\n");
    write(
        "room/door.rs",
        "use super::super::{hall::{self, Floor}, lib_item};\n",
    );
    write("hall.rs", "pub fn walk() { crate::room::enter(); }\n");
    write(
        "alone.rs",
        "use crate::hall::Floor;\n#[cfg(test)]\nmod tests { use crate::alone::x; }\n",
    );
    let found = circles(src);
    let circle: BTreeSet<String> = found[0]
        .iter()
        .map(|file| file.display().to_string())
        .collect();
    let expected: BTreeSet<String> = ["room/mod.rs", "room/door.rs", "hall.rs"]
        .map(str::to_owned)
        .into();
    assert_eq!(circle, expected);
    assert!(
        found[1..].iter().all(|circle| circle.len() == 1),
        "{found:?}"
    );
}
