//! The house rules docs/architecture.md states, read from the sources: no module of any crate
//! imports another in a circle, each floor of the relay and the host reaches only the floors
//! below it, a session's state machine reaches no type of the scheduler's, and in the relay
//! only `cluster/` and `main.rs` name the NATS deployment (the rest reaches it through
//! `core::state::Deployment`).
//!
//! Modules are compared as siblings: a reference from `a::x` to `b::y` is an edge `a -> b`
//! under their common parent; a module may use its own parent or children freely. References
//! are the `crate::` and `super::` paths (in `use` and inline), outside `#[cfg(test)]` code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

const CRATES: &[&str] = &["protocol", "mcp", "host", "relay", "tests/support"];

/// Each crate's floors, bottom up, as docs/architecture.md draws them and each floor's doc
/// says: a module reaches only floors below its own (two on one floor, neither the other).
const FLOORS: &[(&str, &[&[&str]])] = &[
    (
        "relay",
        &[
            &["parts"],
            &["stores"],
            &["config"],
            &["core"],
            &["cluster", "edge"],
            &["server"],
        ],
    ),
    (
        "host",
        &[
            &["cdp", "parts"],
            &["page"],
            &["browser"],
            &["actions"],
            &["engine"],
            &["modes"],
        ],
    ),
];

#[test]
fn no_module_imports_another_in_a_circle() {
    let mut circles = Vec::new();
    for krate in CRATES {
        let edges = edges(krate);
        for circle in strongly_connected(&edges) {
            let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
            circles.push(format!("{krate}: {}", names.join(" <-> ")));
        }
    }
    assert!(
        circles.is_empty(),
        "modules importing each other in a circle:\n{}",
        circles.join("\n")
    );
}

#[test]
fn only_the_cluster_and_main_name_the_cluster() {
    let src = workspace().join("relay/src");
    let named: Vec<String> = sources(&workspace().join("relay"))
        .into_iter()
        .filter(|(module, _)| !matches!(module.first().map(String::as_str), Some("cluster" | "main")))
        .filter(|(module, text)| !module.is_empty() && text.to_lowercase().contains("cluster"))
        .map(|(module, _)| module.join("::"))
        .collect();
    assert!(
        named.is_empty(),
        "modules of {} outside cluster/ and main.rs that name the cluster: {named:?}",
        src.display()
    );
}

#[test]
fn floors_reach_only_downward() {
    let mut wrong = Vec::new();
    for (krate, floors) in FLOORS {
        let floor = |module: &Module| floors.iter().position(|f| f.contains(&module[0].as_str()));
        for module in sources(&workspace().join(krate))
            .into_keys()
            .filter(|m| m.len() == 1)
        {
            if floor(&module).is_none() {
                wrong.push(format!(
                    "{krate}: `{}` stands on no floor: put it in a floor's folder (or, if it is one, in FLOORS and docs/architecture.md)",
                    module[0]
                ));
            }
        }
        for (from, reached) in edges(krate).into_iter().filter(|(m, _)| m.len() == 1) {
            for to in reached {
                if let (Some(at), Some(up)) = (floor(&from), floor(&to)) {
                    if up >= at {
                        wrong.push(format!(
                            "{krate}: `{}` reaches `{}`, not a floor below it",
                            from[0], to[0]
                        ));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "floors reaching upward:\n{}", wrong.join("\n"));
}

/// A session's state machine (`core::sessions`) knows no type of the scheduler's, however
/// indirect the path: it holds their work through `sessions::Work`.
#[test]
fn a_session_knows_nothing_of_the_scheduler() {
    let sessions = vec!["core".to_owned(), "sessions".to_owned()];
    let reached = reached(&edges("relay"), &sessions);
    let above: Vec<&str> = ["scheduler", "job", "reply", "request", "dispatch", "state"]
        .into_iter()
        .filter(|m| reached.contains(&vec!["core".to_owned(), m.to_string()]))
        .collect();
    assert!(above.is_empty(), "core::sessions reaches {above:?}");
}

/// The host names CDP's commands and events by chromiumoxide_cdp's types, or by ours beside
/// them (`cdp/ours.rs`, for what the crate lacks), never by strings: no other file names one.
#[test]
fn cdp_is_named_by_type() {
    let named: Vec<String> = sources(&workspace().join("host"))
        .into_iter()
        .filter(|(module, _)| *module != ["cdp", "ours"])
        .filter_map(|(module, text)| match cdp_names(&text) {
            0 => None,
            n => Some(format!("{}: {n}", module.join("::"))),
        })
        .collect();
    assert!(
        named.is_empty(),
        "name CDP by its typed commands and events (chromiumoxide_cdp, or host/src/cdp/ours.rs), not as strings:\n{}",
        named.join("\n")
    );
}

/// How many string literals in `code` are a CDP method or event (`"Domain.name"`).
fn cdp_names(code: &str) -> usize {
    const DOMAINS: &[&str] = &[
        "Accessibility",
        "Animation",
        "Audits",
        "Browser",
        "CSS",
        "CacheStorage",
        "Console",
        "DOM",
        "DOMSnapshot",
        "DOMStorage",
        "Debugger",
        "Emulation",
        "Fetch",
        "HeadlessExperimental",
        "HeapProfiler",
        "IO",
        "IndexedDB",
        "Input",
        "Inspector",
        "LayerTree",
        "Log",
        "Media",
        "Memory",
        "Network",
        "Overlay",
        "Page",
        "Performance",
        "Profiler",
        "Runtime",
        "Security",
        "ServiceWorker",
        "Storage",
        "SystemInfo",
        "Target",
        "Tracing",
        "WebAuthn",
    ];
    code.split('"')
        .skip(1)
        .step_by(2)
        .filter(|literal| {
            literal.split_once('.').is_some_and(|(domain, name)| {
                DOMAINS.contains(&domain)
                    && name.starts_with(|c: char| c.is_ascii_lowercase())
                    && name.chars().all(|c| c.is_ascii_alphanumeric())
            })
        })
        .count()
}

/// A crate's references between sibling modules (see the module doc).
fn edges(krate: &str) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = sources(&workspace().join(krate));
    let modules: BTreeSet<Module> = files.keys().cloned().collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in &files {
        for path in references(module, text) {
            if let Some((from, to)) = sibling_edge(module, &deepest(&modules, &path)) {
                edges.entry(from).or_default().insert(to);
            }
        }
    }
    edges
}

/// The modules `from` reaches through any number of edges.
fn reached(edges: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> BTreeSet<Module> {
    let mut seen = BTreeSet::new();
    let mut next = vec![from.clone()];
    while let Some(module) = next.pop() {
        for to in edges.get(&module).into_iter().flatten() {
            if seen.insert(to.clone()) {
                next.push(to.clone());
            }
        }
    }
    seen
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every `.rs` file under the crate's source folder, by module path (the crate root is `[]`;
/// `lib.rs`, `main.rs` and `mod.rs` are their folder's module), its text without comments and
/// test code.
fn sources(krate: &Path) -> BTreeMap<Module, String> {
    let root = if krate.join("src").is_dir() {
        krate.join("src")
    } else {
        krate.to_path_buf()
    };
    let mut files = BTreeMap::new();
    // Modules declared `#[cfg(test)] mod name;`: test code in a file of its own.
    let mut test_only = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut module: Module = path
                    .strip_prefix(&root)
                    .unwrap()
                    .with_extension("")
                    .iter()
                    .map(|part| part.to_string_lossy().into_owned())
                    .collect();
                if matches!(module.last().map(String::as_str), Some("lib" | "main" | "mod")) {
                    module.pop();
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.split("#[cfg(test)]").skip(1) {
                    if let Some(name) = line
                        .trim_start()
                        .strip_prefix("mod ")
                        .and_then(|l| l.split(';').next())
                    {
                        test_only.push(module_path(&module, name));
                    }
                }
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                let code: Vec<&str> = code
                    .lines()
                    .map(|line| line.split("//").next().unwrap_or_default())
                    .collect();
                files.insert(module, code.join("\n"));
            }
        }
    }
    files.retain(|module, _| !test_only.contains(module));
    files
}

/// The path of `name`, a child module declared in `parent`'s file.
fn module_path(parent: &Module, name: &str) -> Module {
    parent.iter().cloned().chain([name.trim().to_owned()]).collect()
}

/// The module paths `text` (the source of `module`) reaches through `crate::` and `super::`.
fn references(module: &Module, text: &str) -> Vec<Module> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::").into_iter().chain(rest.find("super::")).min() {
        let (mut base, mut tail) = match rest[at..].starts_with("crate::") {
            true => (Vec::new(), &rest[at + "crate::".len()..]),
            false => (module.clone(), &rest[at..]),
        };
        while let Some(after) = tail.strip_prefix("super::") {
            base.pop();
            tail = after;
        }
        for path in paths(tail) {
            found.push(base.iter().cloned().chain(path).collect());
        }
        rest = &rest[at + 1..];
    }
    found
}

/// The paths at the start of `text`: `a::b` or a group `{a::b, c::{d, e}}` (each item's leading
/// path is enough to find its module).
fn paths(text: &str) -> Vec<Module> {
    let ident = |s: &str| {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("")
            .to_owned()
    };
    if let Some(group) = text.strip_prefix('{') {
        let (mut depth, mut items, mut item) = (0, Vec::new(), String::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                _ if depth == 0 => item.push(c),
                _ => {}
            }
        }
        items.push(item);
        return items.iter().flat_map(|item| paths(item.trim())).collect();
    }
    let mut path = Vec::new();
    let mut tail = text;
    loop {
        let name = ident(tail);
        if name.is_empty() {
            break;
        }
        tail = &tail[name.len()..];
        path.push(name);
        match tail.strip_prefix("::") {
            Some(after) if !after.starts_with('{') => tail = after,
            _ => break,
        }
    }
    vec![path]
}

/// The longest prefix of `path` that is a module of the crate.
fn deepest(modules: &BTreeSet<Module>, path: &Module) -> Module {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

/// The edge between the two children of `from`'s and `to`'s common parent that hold them; none
/// when one holds the other.
fn sibling_edge(from: &Module, to: &Module) -> Option<(Module, Module)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    (common < from.len() && common < to.len()).then(|| (from[..=common].to_vec(), to[..=common].to_vec()))
}

/// The groups of two or more modules that reach each other (Tarjan's algorithm).
fn strongly_connected(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                match self.index.get(w) {
                    None => {
                        self.visit(w);
                        let low = self.index[w].1.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(&(at, _)) if self.stack.contains(&w) => {
                        let low = at.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(_) => {}
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let at = self.stack.iter().position(|m| *m == v).unwrap();
                let group: Vec<Module> = self.stack.drain(at..).cloned().collect();
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}
