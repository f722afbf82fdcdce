//! The docs against the repository, read from disk (no build of anything, no network):
//! docs/architecture.md's Layout lists exactly the source tree, every relative link of README
//! and docs/ names a file that exists, and README's test command is the one `.ci/run` runs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One entry of the Layout: its path from the repository's root (a folder ends in `/`), its
/// line as written, and whether it says what it is for.
struct Entry {
    path: String,
    line: String,
    described: bool,
}

/// The Layout block of docs/architecture.md: one entry a line, two spaces of indent a level, a
/// folder ending in `/`, then at least two spaces and what it is for.
fn layout() -> Vec<Entry> {
    let page = read("docs/architecture.md");
    let (start, end) = ("<!-- layout:start -->", "<!-- layout:end -->");
    let from = page
        .find(start)
        .expect("docs/architecture.md has <!-- layout:start -->")
        + start.len();
    let to = from
        + page[from..]
            .find(end)
            .expect("docs/architecture.md has <!-- layout:end -->");
    let mut folders: Vec<String> = Vec::new();
    let mut entries = Vec::new();
    for line in page[from..to].lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with("```") {
            continue;
        }
        let indent = line.len() - trimmed.len();
        assert!(
            indent % 2 == 0 && indent / 2 <= folders.len(),
            "docs/architecture.md, Layout: {line:?} is indented {indent} spaces; two a level, under its folder"
        );
        folders.truncate(indent / 2);
        let name = trimmed.split_whitespace().next().unwrap_or_default();
        let path = format!("{}{name}", folders.concat());
        if name.ends_with('/') {
            folders.push(name.to_string());
        }
        let rest = &trimmed[name.len()..];
        entries.push(Entry {
            path,
            line: line.to_string(),
            described: rest.starts_with("  ") && !rest.trim().is_empty(),
        });
    }
    entries
}

/// Every folder and file under `dir`, as paths from the repository's root (folders end in `/`).
fn walk(dir: &Path, into: &mut BTreeSet<String>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    for entry in read {
        let path: PathBuf = entry.unwrap().path();
        let relative = path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        if path.is_dir() {
            into.insert(format!("{relative}/"));
            walk(&path, into);
        } else {
            into.insert(relative);
        }
    }
}

/// The source tree the Layout covers: `src/` and, in a workspace, each `crates/<name>/src/`.
fn source_tree() -> BTreeSet<String> {
    let mut tree = BTreeSet::new();
    tree.insert("src/".to_string());
    walk(&root().join("src"), &mut tree);
    if let Ok(crates) = std::fs::read_dir(root().join("crates")) {
        for krate in crates {
            let src = krate.unwrap().path().join("src");
            if src.is_dir() {
                let relative = src.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
                tree.insert(format!("{relative}/"));
                walk(&src, &mut tree);
            }
        }
    }
    tree
}

/// How a missing path is written in the Layout: under its folder, indented by its depth.
fn line_for(path: &str) -> String {
    let depth = path.trim_end_matches('/').matches('/').count();
    let name = path.trim_end_matches('/').rsplit('/').next().unwrap_or(path);
    let name = if path.ends_with('/') {
        format!("{name}/")
    } else {
        name.to_string()
    };
    format!("{:indent$}{name}  <what it is for>", "", indent = 2 * depth)
}

/// docs/architecture.md's Layout lists every folder and file of the source tree, and nothing
/// that is not there; each line says what its file or folder is for.
#[test]
fn layout_lists_exactly_the_source_tree() {
    let entries = layout();
    let listed: BTreeSet<String> = entries.iter().map(|e| e.path.clone()).collect();
    let tree = source_tree();
    let missing: Vec<&String> = tree.iter().filter(|p| !listed.contains(*p)).collect();
    let gone: Vec<&Entry> = entries
        .iter()
        .filter(|e| !tree.contains(&e.path) && !root().join(&e.path).exists())
        .collect();
    let bare: Vec<&Entry> = entries.iter().filter(|e| !e.described).collect();
    let mut twice = BTreeSet::new();
    let repeated: Vec<&Entry> = entries.iter().filter(|e| !twice.insert(&e.path)).collect();

    let mut report = String::new();
    if !missing.is_empty() {
        report.push_str("in the tree, not in the layout (add these lines under their folder):\n");
        for path in &missing {
            report.push_str(&format!("{}    ({path})\n", line_for(path)));
        }
    }
    if !gone.is_empty() {
        report.push_str("in the layout, not in the tree (remove or rename these lines):\n");
        for entry in &gone {
            report.push_str(&format!("{}    ({})\n", entry.line, entry.path));
        }
    }
    for (what, list) in [("without what it is for", &bare), ("listed twice", &repeated)] {
        if !list.is_empty() {
            report.push_str(&format!("{what}:\n"));
            for entry in list.iter() {
                report.push_str(&format!("{}    ({})\n", entry.line, entry.path));
            }
        }
    }
    assert!(
        report.is_empty(),
        "docs/architecture.md's Layout differs from the tree (src/ and crates/*/src/):\n{report}\
         One line an entry: two spaces of indent a level, a folder ending in `/`, then two spaces and what it is for."
    );
}

/// The anchors of a page's headings, as GitHub makes them: lower case, spaces to `-`, and
/// every other character but letters, digits, `-` and `_` dropped.
fn anchors(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every relative link and image of README and docs/ names a file that exists (the screenshots
/// included), and a heading of it where the link names one, so moving a page, a section or a
/// file cannot leave a dead link behind.
#[test]
fn links_between_the_pages_name_files_that_exist() {
    let mut pages = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path.strip_prefix(root()).unwrap().to_path_buf());
        }
    }
    let mut dead = Vec::new();
    for page in &pages {
        let text = read(&page.to_string_lossy());
        let dir = page.parent().unwrap_or(Path::new(""));
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let Some(end) = target.find(')') else { continue };
            let (file, anchor) = target[..end].split_once('#').unwrap_or((&target[..end], ""));
            if target[..end].contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let path = if file.is_empty() { page.clone() } else { dir.join(file) };
            if !root().join(&path).exists() {
                dead.push(format!("{}: {file}", page.display()));
            } else if !anchor.is_empty() && !anchors(&read(&path.to_string_lossy())).contains(anchor) {
                dead.push(format!("{}: {file}#{anchor} (no such heading)", page.display()));
            }
        }
    }
    assert!(
        dead.is_empty(),
        "links to files or headings that do not exist:\n{}",
        dead.join("\n")
    );
}

/// README's second set-up command is the test command `.ci/run` runs (there under a long
/// TMPDIR), so what a newcomer runs is what CI runs.
#[test]
fn readme_gives_the_test_command_ci_runs() {
    let readme = read("README.md");
    let ci = read(".ci/run");
    let ci_test = ci
        .lines()
        .rev()
        .find(|l| l.contains("cargo test"))
        .expect(".ci/run runs cargo test");
    let command = ci_test[ci_test.find("cargo test").unwrap()..].trim();
    let setup = readme
        .split_once("## Set-up")
        .and_then(|(_, rest)| rest.split_once("```sh"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("README has a Set-up section with a sh block");
    let commands: Vec<&str> = setup
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        commands.get(1).copied(),
        Some(command),
        "README's Set-up gives {commands:?}; .ci/run runs {command:?}"
    );
}

/// docs/team.md's table of roles is the permission table's own words: a role added to the
/// table (`esimdash_domain::role::ROLES`) fails here until the page says it too.
#[test]
fn team_page_lists_the_roles_of_the_permission_table() {
    let page = read("docs/team.md");
    let table = esimdash_domain::role::Role::markdown_table();
    assert!(
        page.contains(&table),
        "docs/team.md's table of roles differs from the permission table; it should read:\n{table}"
    );
}
