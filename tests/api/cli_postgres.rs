//! `petstore-server --db postgres://...` as an operator meets it when something is wrong:
//! one clear line, exit code 1, and the password never shown.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_petstore-server");

/// A URL with a password, on a loopback port nothing listens on (port 1 needs root to
/// bind, and nothing here does).
const UNREACHABLE: &str = "postgres://shop:s3cret-pw@127.0.0.1:1/chain";

fn run(db: &str, args: &[&str], key: Option<&str>) -> Output {
    let mut command = Command::new(BIN);
    command.arg("--db").arg(db).args(args).env_remove("PETSTORE_API_KEY").env_remove("PGPASSWORD");
    if let Some(key) = key {
        command.env("PETSTORE_API_KEY", key);
    }
    command.output().unwrap()
}

/// The one line of a failed command, after checking it failed with exit code 1 and said
/// nothing of the password anywhere.
#[track_caller]
fn one_line_error(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("s3cret-pw") && !stdout.contains("s3cret-pw"), "the password shown: {stderr}");
    stderr
}

#[test]
fn an_unreachable_postgres_server_is_one_line_naming_it_without_the_password() {
    let key = "cli-test-key-0123456789abcdefghij";
    for args in [&["serve", "--listen", "127.0.0.1:0"][..], &["keys", "list"], &["seed", "--pets", "1"]] {
        let line = one_line_error(&run(UNREACHABLE, args, Some(key)));
        assert!(line.contains("127.0.0.1:1") && line.contains("cannot reach PostgreSQL"), "{args:?}: {line}");
    }
}

#[test]
fn backup_and_restore_on_postgres_point_to_pg_dump_and_pg_restore() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("copy.db");
    let line = one_line_error(&run(UNREACHABLE, &["backup", "--to", to.to_str().unwrap()], None));
    assert!(line.contains("pg_dump"), "{line}");
    assert!(!to.exists());
    let line = one_line_error(&run(UNREACHABLE, &["restore", "--from", to.to_str().unwrap()], None));
    assert!(line.contains("pg_restore"), "{line}");
}

#[test]
fn serving_postgres_needs_the_key_in_the_environment() {
    let line = one_line_error(&run(UNREACHABLE, &["serve", "--listen", "127.0.0.1:0"], None));
    assert!(line.contains("PETSTORE_API_KEY"), "{line}");
    let line = one_line_error(&run(UNREACHABLE, &["key"], None));
    assert!(line.contains("PETSTORE_API_KEY"), "{line}");
}

#[test]
fn a_malformed_postgres_url_is_refused_before_anything_else() {
    let line = one_line_error(&run(
        "postgres://shop:s3cret-pw@127.0.0.1:1/chain?sslmode=sometimes",
        &["keys", "list"],
        None,
    ));
    assert!(line.contains("sslmode"), "{line}");
    let line = one_line_error(&run("postgres://shop:s3cret-pw@127.0.0.1:1", &["keys", "list"], None));
    assert!(line.contains("names no database"), "{line}");
}

#[test]
fn help_never_shows_the_database_url_from_the_environment() {
    let output = Command::new(BIN).arg("--help").env("PETSTORE_DB", UNREACHABLE).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(help.contains("PETSTORE_DB") && !help.contains("s3cret-pw"), "{help}");
}
