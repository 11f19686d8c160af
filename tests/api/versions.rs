//! One version everywhere: the installers take theirs from tauri.conf.json, the crates from
//! Cargo.toml, the UI from ui/package.json and integrators read the API's in openapi.yaml.
//! A release bumps them together; this test fails when one is forgotten.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use toml::Value as Toml;

fn repo_file(relative: &str) -> (PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    (path, text)
}

fn toml_file(relative: &str) -> Toml {
    let (path, text) = repo_file(relative);
    toml::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn json_file(relative: &str) -> Json {
    let (path, text) = repo_file(relative);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// `package.version` of a Cargo manifest, following `version.workspace = true` to the
/// root manifest's `workspace.package.version`.
fn cargo_version(manifest: &Toml, workspace: &Toml, name: &str) -> String {
    let package = &manifest["package"];
    assert_eq!(package["name"].as_str(), Some(name), "the manifest of {name}");
    match &package["version"] {
        Toml::String(version) => version.clone(),
        Toml::Table(t) if t.get("workspace").and_then(Toml::as_bool) == Some(true) => {
            let inherited =
                workspace.get("workspace").and_then(|w| w.get("package")).and_then(|p| p.get("version"));
            inherited.and_then(Toml::as_str).expect("workspace.package.version in Cargo.toml").to_owned()
        }
        other => panic!("package.version of {name} is neither a string nor inherited: {other}"),
    }
}

fn string_at<'a>(value: &'a Json, pointer: &str, file: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Json::as_str)
        .unwrap_or_else(|| panic!("{file} has no string at {pointer}"))
}

#[test]
fn every_file_that_carries_the_version_carries_the_same_one() {
    let root = toml_file("Cargo.toml");
    let desktop = toml_file("src-tauri/Cargo.toml");
    let tauri_conf = json_file("src-tauri/tauri.conf.json");
    let package_json = json_file("ui/package.json");
    let (path, text) = repo_file("openapi.yaml");
    let openapi: Json =
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));

    let versions = [
        ("Cargo.toml (petstore)", cargo_version(&root, &root, "petstore")),
        ("src-tauri/Cargo.toml (petstore-desktop)", cargo_version(&desktop, &root, "petstore-desktop")),
        ("src-tauri/tauri.conf.json", string_at(&tauri_conf, "/version", "tauri.conf.json").to_owned()),
        ("ui/package.json", string_at(&package_json, "/version", "package.json").to_owned()),
        ("openapi.yaml (info.version)", string_at(&openapi, "/info/version", "openapi.yaml").to_owned()),
    ];

    // What Cargo itself resolved for this crate, so the parsing above cannot drift from it.
    let expected = env!("CARGO_PKG_VERSION");
    let disagreeing: Vec<_> = versions.iter().filter(|(_, v)| v != expected).collect();
    assert!(
        disagreeing.is_empty(),
        "versions that differ from {expected}: {disagreeing:?} (all: {versions:?})"
    );
}

/// `major.minor` of a version string.
fn minor_line(version: &str) -> &str {
    let end = version.match_indices('.').nth(1).map_or(version.len(), |(i, _)| i);
    &version[..end]
}

#[test]
fn the_tauri_crate_and_its_npm_packages_are_on_one_minor_line() {
    // `tauri build` (and so `make bundle` and the release workflow) refuses to bundle when
    // the crate and @tauri-apps/api differ in major.minor; catch it here, in seconds.
    let lock = toml_file("Cargo.lock");
    let crate_version = lock["package"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"].as_str() == Some("tauri")))
        .and_then(|p| p["version"].as_str())
        .expect("tauri in Cargo.lock")
        .to_owned();
    let npm_lock = json_file("ui/package-lock.json");
    for package in ["@tauri-apps/api", "@tauri-apps/cli"] {
        let pointer = format!("/packages/node_modules~1{}/version", package.replace('/', "~1"));
        let version = string_at(&npm_lock, &pointer, "ui/package-lock.json");
        assert_eq!(
            minor_line(version),
            minor_line(&crate_version),
            "{package} {version} against the tauri crate {crate_version}"
        );
    }
}
