//! The module graph of every crate of the workspace, and its cycles.
//!
//! A module (a source file) depends on another when it names a path in it (`crate::…`,
//! `super::…`, `self::…`, in `use` declarations, groups included, and inline). A module may
//! use what its ancestors define (a child of `model` uses `model::KafkaCluster`), so edges to
//! an ancestor are not counted; everything else is: two modules that depend on each other,
//! directly or through others, are a cycle. Comments and `#[cfg(test)] mod tests` blocks are
//! left out.
//!
//! The test prints every cycle and fails on one that [`KNOWN_CYCLES`] does not list, and on a
//! listed cycle that is gone or has changed (remove it from the list): the list only
//! shrinks. Run it with `cargo test -p strimzi-tests --test module_cycles -- --nocapture`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The cycles the workspace may have, by crate folder, each as its sorted module paths:
/// none. A cycle that cannot be broken at once would be listed here, and the list only
/// shrinks.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

/// A module: its path in the crate (`["model", "meta"]`; empty for the crate root).
type ModulePath = Vec<String>;

/// The workspace's crate folders with a `src/`.
fn crates(workspace: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap();
    let members = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(members, _)| members)
        .expect("the workspace lists its members");
    members
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .filter(|member| !member.is_empty())
        .map(|member| workspace.join(member))
        .filter(|folder| folder.join("src").is_dir())
        .collect()
}

/// Every `.rs` file under `folder` but `src/bin`, with its module path.
fn modules(src: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut found = BTreeMap::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path != src.join("bin") {
                    folders.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: ModulePath = relative
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

/// The source without comments and without a trailing `#[cfg(test)] mod tests` block.
fn code(source: &str) -> String {
    let source = source
        .find("#[cfg(test)]\nmod tests")
        .map_or(source, |end| &source[..end]);
    source
        .lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path `source` names from `crate`, `super` or `self`, made absolute for module
/// `module`; `use` groups (`crate::a::{b::C, d}`) give one path per item.
fn named_paths(source: &str, module: &[String]) -> Vec<ModulePath> {
    let chars: Vec<char> = source.chars().collect();
    let mut paths = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let starts_word = at == 0 || !is_ident(chars[at - 1]) && chars[at - 1] != ':';
        if starts_word {
            for head in ["crate", "super", "self"] {
                let word: Vec<char> = head.chars().collect();
                let end = at + word.len();
                if chars.get(at..end) == Some(&word[..])
                    && chars.get(end..end + 2) == Some(&[':', ':'][..])
                {
                    let prefix = match head {
                        "crate" => Vec::new(),
                        "self" => module.to_vec(),
                        _ => module[..module.len().saturating_sub(1)].to_vec(),
                    };
                    at = read_path(&chars, end + 2, prefix, &mut paths);
                    break;
                }
            }
        }
        at += 1;
    }
    paths
}

/// Reads `a::b::{…}` from `at` onto `prefix` (`super` steps up), pushing each full path;
/// returns where it stopped.
fn read_path(
    chars: &[char],
    mut at: usize,
    mut prefix: ModulePath,
    out: &mut Vec<ModulePath>,
) -> usize {
    loop {
        while chars.get(at).is_some_and(|c| c.is_whitespace()) {
            at += 1;
        }
        if chars.get(at) == Some(&'{') {
            at += 1;
            loop {
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_whitespace() || *c == ',')
                {
                    at += 1;
                }
                match chars.get(at) {
                    None => return at,
                    Some('}') => return at + 1,
                    _ => {
                        let before = at;
                        at = read_path(chars, at, prefix.clone(), out);
                        if at == before {
                            at += 1;
                        }
                    }
                }
            }
        }
        let start = at;
        while chars.get(at).copied().is_some_and(is_ident) {
            at += 1;
        }
        if at == start {
            out.push(prefix);
            return at;
        }
        let word: String = chars[start..at].iter().collect();
        match word.as_str() {
            "super" => {
                prefix.pop();
            }
            "self" => {}
            _ => prefix.push(word),
        }
        if chars.get(at..at + 2) == Some(&[':', ':'][..]) {
            at += 2;
        } else {
            out.push(prefix);
            return at;
        }
    }
}

/// The module a path points into: its longest prefix that is a module.
fn module_of<'m>(
    path: &[String],
    modules: &'m BTreeMap<ModulePath, PathBuf>,
) -> Option<&'m ModulePath> {
    (0..=path.len())
        .rev()
        .find_map(|length| modules.get_key_value(&path[..length]).map(|(key, _)| key))
}

/// The dependencies of each module of `modules`, edges to itself and its ancestors left out.
fn graph(modules: &BTreeMap<ModulePath, PathBuf>) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
    modules
        .iter()
        .map(|(module, file)| {
            let source = code(&std::fs::read_to_string(file).unwrap());
            let targets = named_paths(&source, module)
                .iter()
                .filter_map(|path| module_of(path, modules))
                .filter(|target| !module.starts_with(target))
                .cloned()
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<BTreeSet<ModulePath>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        next: usize,
        index: BTreeMap<&'g ModulePath, usize>,
        low: BTreeMap<&'g ModulePath, usize>,
        stack: Vec<&'g ModulePath>,
        found: Vec<BTreeSet<ModulePath>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, module: &'g ModulePath) {
            self.index.insert(module, self.next);
            self.low.insert(module, self.next);
            self.next += 1;
            self.stack.push(module);
            for target in &self.graph[module] {
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[module].min(self.low[target]);
                    self.low.insert(module, low);
                } else if self.stack.contains(&target) {
                    let low = self.low[module].min(self.index[target]);
                    self.low.insert(module, low);
                }
            }
            if self.low[module] == self.index[module] {
                let mut component = BTreeSet::new();
                while let Some(member) = self.stack.pop() {
                    component.insert(member.clone());
                    if member == module {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        next: 0,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in graph.keys() {
        if !walk.index.contains_key(module) {
            walk.visit(module);
        }
    }
    walk.found
}

fn name(module: &ModulePath) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

#[test]
fn no_crate_has_a_module_cycle_beyond_the_known_ones() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    for folder in crates(workspace) {
        let crate_name = folder
            .strip_prefix(workspace)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let modules = modules(&folder.join("src"));
        for cycle in cycles(&graph(&modules)) {
            let members: Vec<String> = cycle.iter().map(name).collect();
            println!(
                "{crate_name}: {} modules: {}",
                members.len(),
                members.join(", ")
            );
            found.insert((crate_name.clone(), members));
        }
    }
    let known: BTreeSet<(String, Vec<String>)> = KNOWN_CYCLES
        .iter()
        .map(|(crate_name, members)| {
            let members = members.iter().map(|member| (*member).to_owned()).collect();
            ((*crate_name).to_owned(), members)
        })
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "module cycles not in KNOWN_CYCLES: {new:?}; listed but no longer found (remove them): \
         {gone:?}"
    );
}

#[test]
fn the_graph_sees_paths_groups_and_super() {
    let module: ModulePath = vec!["model".to_owned(), "meta".to_owned()];
    let source = code(
        "use crate::model::{components::X, rack::{self, Y}};\n\
         use super::nodes::Z; // crate::ignored::in_comment\n\
         fn f() { self::inner(); crate::other::call(); }\n\
         #[cfg(test)]\nmod tests { use crate::test_only::T; }",
    );
    let paths: BTreeSet<String> = named_paths(&source, &module)
        .iter()
        .map(|path| path.join("::"))
        .collect();
    let expected: BTreeSet<String> = [
        "model::components::X",
        "model::rack",
        "model::rack::Y",
        "model::nodes::Z",
        "model::meta::inner",
        "other::call",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(paths, expected);
    let graph = BTreeMap::from([
        (vec![], BTreeSet::from([vec!["a".to_owned()]])),
        (vec!["a".to_owned()], BTreeSet::from([vec!["b".to_owned()]])),
        (vec!["b".to_owned()], BTreeSet::from([vec!["a".to_owned()]])),
    ]);
    assert_eq!(
        cycles(&graph),
        [BTreeSet::from([vec!["a".to_owned()], vec!["b".to_owned()]])]
    );
}
