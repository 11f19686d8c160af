//! The module map of docs/ARCHITECTURE.md ("Modules of the core and what imports what") is
//! kept true by this test: it reads the map, reads every `crate::` path in `src/` (and every
//! `petstore::` path in the server binary), and fails naming the file and the arrow when code
//! imports a module the map does not allow, when the map allows an arrow no code has, and
//! when a module of the core is missing from the map. A map that is only read by people
//! drifts: it said "postgres never store" long after it did, and lacked the till's mirror.
//!
//! Only the code that ships is held to the map: test-only code (a `#[cfg(test)]` item or
//! module file, or one of the `test-support` feature) starts servers, clients and stores as
//! it needs. Comments and string literals are blanked before the paths are read, so a path
//! named in a comment is not an import.
//!
//! The same file holds ARCHITECTURE.md's error code tables to openapi.yaml and `ErrorCode`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const MAP_HEADING: &str = "### Modules of the core and what imports what";
const ARROW: &str = "──►";

/// Module → the modules it may import, as the map draws them.
type Arrows = BTreeMap<String, BTreeSet<String>>;

/// The repository: cargo sets `CARGO_MANIFEST_DIR` when it runs the test, and the binary
/// run by hand with it pointed elsewhere checks another tree (a merge before it is made).
fn root() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or(env!("CARGO_MANIFEST_DIR").into()))
}

#[test]
fn the_module_map_in_architecture_md_is_what_the_code_imports() {
    let doc = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let map = parse_map(&doc).unwrap_or_else(|e| panic!("docs/ARCHITECTURE.md: {e}"));
    let code = imports_in(&root().join("src"));
    let failures = compare(&map, &code);
    assert!(
        failures.is_empty(),
        "docs/ARCHITECTURE.md's module map and src/ disagree:\n{}",
        failures.join("\n")
    );
}

/// The table of "Error codes" in docs/ARCHITECTURE.md has a row for each code of
/// openapi.yaml's `Error` object, with the status `ErrorCode::status` gives it, and no other
/// row: it once lacked `duplicate_sku`, and said the client-side codes were not in the
/// document when they were.
#[test]
fn the_error_code_tables_in_architecture_md_are_the_documents_codes_with_their_statuses() {
    let doc = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let section = doc
        .split_once("\n## Error codes\n")
        .expect("a section \"Error codes\"")
        .1
        .split("\n## ")
        .next()
        .unwrap();
    let rows: BTreeSet<(String, String)> = section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let status = cells.get(1)?;
            let code = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
            status.parse::<u16>().ok()?;
            Some((status.to_string(), code.to_owned()))
        })
        .collect();

    let document: serde_json::Value =
        serde_norway::from_str(&fs::read_to_string(root().join("openapi.yaml")).unwrap()).unwrap();
    let codes = document["components"]["schemas"]["Error"]["properties"]["code"]["enum"]
        .as_array()
        .expect("openapi.yaml's Error.code is an enum");
    let expected: BTreeSet<(String, String)> = codes
        .iter()
        .map(|code| {
            let parsed: petstore::ErrorCode = serde_json::from_value(code.clone())
                .unwrap_or_else(|e| panic!("openapi.yaml's code {code} is no ErrorCode: {e}"));
            (parsed.status().to_string(), code.as_str().unwrap().to_owned())
        })
        .collect();

    let missing: Vec<_> = expected.difference(&rows).collect();
    let extra: Vec<_> = rows.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/ARCHITECTURE.md's error code tables lack (status, code) {missing:?} and have {extra:?}, \
         which openapi.yaml and ErrorCode::status do not"
    );
}

/// Every way the map and the code can disagree, one line each.
fn compare(map: &Arrows, code: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<String> {
    let mut failures = Vec::new();
    for module in code.keys() {
        if !map.contains_key(module) {
            failures.push(format!("module `{module}` is not in the map"));
        }
    }
    for (module, targets) in code {
        let allowed = map.get(module);
        for (target, files) in targets {
            if !allowed.is_some_and(|a| a.contains(target)) {
                failures.push(format!(
                    "{} imports `{target}`, but the map has no arrow {module} ──► {target}",
                    files.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    for (module, allowed) in map {
        for target in allowed {
            if !code.get(module).is_some_and(|t| t.contains_key(target)) {
                failures.push(format!(
                    "the map has the arrow {module} ──► {target}, but no code of `{module}` imports `{target}`"
                ));
            }
        }
    }
    failures
}

/// The map: the fenced block under [`MAP_HEADING`]. Each entry is `names ──► targets`, the
/// targets going on over the indented lines after it; parenthesised text is a remark;
/// `names: leaves` lists modules that import no other. Names are written `server/`,
/// `backend.rs` or `server.rs, server/`: the module is the name without them.
fn parse_map(doc: &str) -> Result<Arrows, String> {
    let after =
        doc.split_once(MAP_HEADING).ok_or("no heading \"Modules of the core and what imports what\"")?.1;
    let block = after
        .split_once("```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .ok_or("no fenced block under the map's heading")?
        .0;
    let mut entries: Vec<String> = Vec::new();
    for line in block.lines() {
        if line.starts_with(char::is_whitespace) {
            let last = entries.last_mut().ok_or("the map starts with an indented line")?;
            last.push(' ');
            last.push_str(line.trim());
        } else if !line.trim().is_empty() {
            entries.push(line.trim().to_owned());
        }
    }
    let mut map = Arrows::new();
    for entry in entries {
        let entry = without_remarks(&entry);
        let (names, targets) = if let Some((names, targets)) = entry.split_once(ARROW) {
            (names.to_owned(), split_names(targets))
        } else if let Some(names) = entry.trim().strip_suffix(": leaves") {
            (names.to_owned(), BTreeSet::new())
        } else {
            return Err(format!("a map line is neither `a ──► b, c` nor `a, b: leaves`: {entry}"));
        };
        for name in split_names(&names) {
            if map.insert(name.clone(), targets.clone()).is_some() {
                return Err(format!("`{name}` is in the map twice"));
            }
        }
    }
    Ok(map)
}

fn without_remarks(entry: &str) -> String {
    let mut depth = 0usize;
    let mut kept = String::new();
    for c in entry.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => kept.push(c),
            _ => {}
        }
    }
    kept
}

fn split_names(list: &str) -> BTreeSet<String> {
    list.split(',')
        .map(|name| name.trim().trim_end_matches('/').trim_end_matches(".rs"))
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Module → imported module → the files that import it, for the code that ships. A module
/// is a top-level module of the library (`src/x.rs` with `src/x/`) or the server binary.
fn imports_in(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let lib = code_of(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let reexports = reexports(&lib);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let test_files = test_only_files(src, &files);
    let mut imports: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "lib.rs" || test_files.contains(file) {
            continue;
        }
        let (module, root_name) = match rel.strip_prefix("bin/") {
            Some(rest) => (format!("bin/{}", rest.split('/').next().unwrap()), "petstore"),
            None => (rel.split('/').next().unwrap().trim_end_matches(".rs").to_owned(), "crate"),
        };
        let code = shipped(&code_of(&fs::read_to_string(file).unwrap()));
        for target in paths_under(&code, root_name) {
            let target = reexports.get(&target).cloned().unwrap_or(target);
            if target != module {
                imports
                    .entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(format!("src/{rel}"));
            }
        }
    }
    // A module that imports nothing still has to be in the map.
    for file in &files {
        let rel = file.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        if !rel.starts_with("bin/") && rel != "lib.rs" && !rel.contains('/') {
            imports.entry(rel.trim_end_matches(".rs").to_owned()).or_default();
        }
    }
    imports
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `pub use store::Store;` in lib.rs: `crate::Store` is the store's.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (module, items) = path.trim_start_matches("crate::").split_once("::").unwrap();
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let item = item.trim().rsplit(" as ").next().unwrap().trim();
            if !item.is_empty() {
                names.insert(item.to_owned(), module.trim().to_owned());
            }
        }
    }
    names
}

/// The first name after each `crate::` (or `petstore::`), including each name of a group
/// (`crate::{a, b::c}`), read from code with comments and strings blanked.
fn paths_under(code: &str, root_name: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let prefix = format!("{root_name}::");
    let mut from = 0;
    while let Some(at) = code[from..].find(&prefix) {
        let start = from + at;
        from = start + prefix.len();
        if code[..start].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let rest = code[from..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut name = String::new();
            let mut at_item_start = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => at_item_start = true,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if depth == 1 && at_item_start {
                    if is_ident(c) {
                        name.push(c);
                    } else if !name.is_empty() {
                        found.insert(std::mem::take(&mut name));
                        at_item_start = c == ',';
                    }
                }
            }
            if !name.is_empty() {
                found.insert(name);
            }
        } else {
            let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Module files declared test-only (`#[cfg(test)] mod tests;`) and every file under them.
fn test_only_files(src: &Path, files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut test_dirs = Vec::new();
    let mut test_files = BTreeSet::new();
    let mut shipped_modules = BTreeSet::new();
    for file in files {
        let code = code_of(&fs::read_to_string(file).unwrap());
        let own_dir = match file.file_name().unwrap().to_str().unwrap() {
            "mod.rs" | "lib.rs" | "main.rs" => file.parent().unwrap().to_owned(),
            name => file.parent().unwrap().join(name.trim_end_matches(".rs")),
        };
        for statement in shipped(&code).split(';') {
            if let Some((_, name)) = statement.trim_end().rsplit_once("mod ")
                && !name.is_empty()
                && name.chars().all(is_ident)
            {
                shipped_modules.insert(own_dir.join(format!("{name}.rs")));
            }
        }
        for (start, end) in test_only_items(&code) {
            let item = &code[start..end];
            let Some(name) = item
                .split_once("mod ")
                .map(|(_, rest)| rest.trim_end_matches(';').trim())
                .filter(|name| item.trim_end().ends_with(';') && name.chars().all(is_ident))
            else {
                continue;
            };
            test_files.insert(own_dir.join(format!("{name}.rs")));
            test_dirs.push(own_dir.join(name));
        }
    }
    for file in files {
        if test_dirs.iter().any(|dir| file.starts_with(dir)) {
            test_files.insert(file.clone());
        }
    }
    // `#[cfg(not(test))] mod seed;` beside `#[cfg(test)] pub mod seed;`: the file ships.
    test_files.retain(|file| !shipped_modules.contains(file));
    assert!(test_files.iter().all(|f| f.starts_with(src)));
    test_files
}

/// The code with every test-only item blanked.
fn shipped(code: &str) -> String {
    let mut kept = code.to_owned();
    for (start, end) in test_only_items(code) {
        kept.replace_range(start..end, &blank(&code[start..end]));
    }
    kept
}

/// The byte ranges of the items under a test-only `#[cfg(...)]` (one that names `test` and
/// is not a `not(...)`): from the attribute to the item's `;` or its closing brace.
fn test_only_items(code: &str) -> Vec<(usize, usize)> {
    let mut items = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(") {
        let start = from + at;
        let attribute_end = start + code[start..].find(']').unwrap() + 1;
        from = attribute_end;
        let condition = &code[start..attribute_end];
        let names_test = condition.split(|c: char| !is_ident(c) && c != '-').any(|word| word == "test");
        if !names_test || condition.contains("not(") {
            continue;
        }
        let body = &code[attribute_end..];
        let semicolon = body.find(';');
        // A `use` ends at its `;`, whatever braces its group has.
        let is_use = body
            .trim_start()
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ")
            .starts_with("use ");
        let brace = body.find('{').filter(|_| !is_use);
        let end = match (semicolon, brace) {
            (Some(s), Some(b)) if s < b => attribute_end + s + 1,
            (Some(s), None) => attribute_end + s + 1,
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = code.len();
                for (i, c) in body[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = attribute_end + b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => code.len(),
        };
        items.push((start, end));
        from = end;
    }
    items
}

fn blank(text: &str) -> String {
    text.chars().map(blank_char).collect()
}

/// A space for anything but a newline, so that blanked code keeps its lines.
fn blank_char(c: char) -> char {
    if c == '\n' { '\n' } else { ' ' }
}

/// Copies the string or character literal that opens at `start` (`"` or `'`) to `out` with
/// its insides blanked, escapes included; answers where it ends.
fn blank_quoted(chars: &[char], start: usize, out: &mut String) -> usize {
    let quote = chars[start];
    out.push(quote);
    let mut i = start + 1;
    while i < chars.len() && chars[i] != quote {
        if chars[i] == '\\' {
            out.push(' ');
            i += 1;
        }
        if i < chars.len() {
            out.push(blank_char(chars[i]));
            i += 1;
        }
    }
    out.push(quote);
    i + 1
}

/// The source with comments and the insides of string and character literals blanked
/// (newlines kept), so that neither a path in a comment nor a brace in a string counts.
fn code_of(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        let prev_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= chars.len() {
                    break;
                } else {
                    out.push(blank_char(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (at(i + 1) == '"' || at(i + 1) == '#') && raw_string_can_start(&chars, i) {
            let mut hashes = 0;
            let mut j = i + 1;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('r');
            out.push_str(&"#".repeat(hashes));
            out.push('"');
            i = j + 1;
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                    out.push('"');
                    out.push_str(&"#".repeat(hashes));
                    i += 1 + hashes;
                    break;
                }
                out.push(blank_char(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            i = blank_quoted(&chars, i, &mut out);
        } else if c == '\'' && !prev_ident && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('x', '\n', '\u{1F600}'); a lifetime ('a) has no closing quote.
            i = blank_quoted(&chars, i, &mut out);
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `r"..."`, `r#"..."#` or `br"..."`, not the end of an identifier such as `for` or `br`.
fn raw_string_can_start(chars: &[char], i: usize) -> bool {
    match i.checked_sub(1).map(|p| chars[p]) {
        None => true,
        Some('b') => i < 2 || !is_ident(chars[i - 2]),
        Some(p) => !is_ident(p),
    }
}

#[cfg(test)]
mod reading {
    use super::*;

    #[test]
    fn paths_in_comments_and_strings_are_not_imports() {
        let code = code_of(
            "// crate::api\nlet s = \"crate::store {\"; let r = r#\"crate::mirror\"#; let c = '{';\nuse crate::domain::Pet;",
        );
        assert_eq!(paths_under(&code, "crate"), BTreeSet::from(["domain".to_owned()]));
    }

    #[test]
    fn a_group_names_each_module() {
        let code = code_of("use crate::{api::X, store::{Store, Y}, error};");
        assert_eq!(
            paths_under(&code, "crate"),
            BTreeSet::from(["api".to_owned(), "store".to_owned(), "error".to_owned()])
        );
    }

    #[test]
    fn test_only_code_is_left_out() {
        let code = code_of(
            "use crate::domain;\n#[cfg(test)]\nuse crate::{server, idempotency};\n#[cfg(test)]\nmod tests {\n    use crate::api;\n    fn f() { let s = \"}\"; }\n}\n#[cfg(any(test, feature = \"test-support\"))]\nuse crate::demo;\n#[cfg(not(test))]\nuse crate::clock;\n",
        );
        assert_eq!(
            paths_under(&shipped(&code), "crate"),
            BTreeSet::from(["domain".to_owned(), "clock".to_owned()])
        );
    }

    #[test]
    fn an_arrow_the_map_lacks_and_one_no_code_has_both_fail() {
        let map = parse_map(
            "### Modules of the core and what imports what\n\n```\nclient/   ──► domain, error (never\n              store)\nerror.rs, domain/: leaves\n```\n",
        )
        .unwrap();
        let code = BTreeMap::from([
            (
                "client".to_owned(),
                BTreeMap::from([
                    ("store".to_owned(), BTreeSet::from(["src/client/x.rs".to_owned()])),
                    ("domain".to_owned(), BTreeSet::from(["src/client/y.rs".to_owned()])),
                ]),
            ),
            ("domain".to_owned(), BTreeMap::new()),
            ("error".to_owned(), BTreeMap::new()),
        ]);
        assert_eq!(
            compare(&map, &code),
            [
                "src/client/x.rs imports `store`, but the map has no arrow client ──► store",
                "the map has the arrow client ──► error, but no code of `client` imports `error`",
            ]
        );
    }
}
