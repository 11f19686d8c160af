//! The file commands take only files: an import of a typed `/dev/zero` (length 0, no end)
//! or a folder is refused at once, a file larger than 10 MB too, and an export does not
//! write into a device; an export, which carries customers' names and phones, is the
//! user's alone (0600), even where one with a wider mode was before.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::helpers::app;

#[test]
fn an_import_reads_only_a_file_and_at_most_10_mb() {
    let app = app();
    let import = |path: &std::path::Path| {
        app.fails("import_pets_csv", json!({ "path": path, "createCategories": true, "dryRun": true }))
    };
    for not_a_file in [std::path::Path::new("/dev/zero"), app.dir.path()] {
        let refused = import(not_a_file);
        assert!(
            refused["message"].as_str().unwrap().ends_with("it is not a file"),
            "{not_a_file:?}: {refused}"
        );
    }
    let big = app.dir.path().join("big.csv");
    let mut text = String::from("name,category\n");
    while text.len() <= 10 * 1024 * 1024 {
        text.push_str("Rex,Dogs\n");
    }
    std::fs::write(&big, text).unwrap();
    let refused = import(&big);
    assert!(refused["message"].as_str().unwrap().contains("at most 10 MB"), "{refused}");
}

#[test]
fn an_export_is_private_and_is_written_only_over_a_file() {
    let app = app();
    app.ok("create_pet", json!({ "pet": { "name": "Rex" } }));
    let path = app.dir.path().join("orders.csv");
    // A part left with a wide mode by an export that was stopped, and an older export.
    std::fs::write(app.dir.path().join("orders.csv.part"), "old").unwrap();
    std::fs::set_permissions(app.dir.path().join("orders.csv.part"), std::fs::Permissions::from_mode(0o644))
        .unwrap();
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    for kind in ["orders", "pets"] {
        app.ok("export_csv", json!({ "kind": kind, "path": path, "from": null, "to": null }));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{kind}: mode {mode:o}");
    }
    let refused =
        app.fails("export_csv", json!({ "kind": "pets", "path": "/dev/null", "from": null, "to": null }));
    assert!(refused["message"].as_str().unwrap().ends_with("it is not a file"), "{refused}");
}
