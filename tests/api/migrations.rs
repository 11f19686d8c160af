use petstore::Store;
use petstore::store::{OpenError, SCHEMA_VERSION, migrations};

#[test]
fn migrations_are_valid() {
    migrations().validate().unwrap();
}

#[test]
fn a_new_database_is_at_the_latest_schema_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: usize =
        conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).unwrap() as usize;
    assert_eq!(version, SCHEMA_VERSION);
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0)).unwrap();
    assert_eq!(page_size, 2048, "a new database has the store's page size");
}

/// Every shop starts with one owner and no PIN (migration 0016), a new one as an upgraded
/// one: the shop of one owner works without a PIN prompt, as before staff.
#[test]
fn a_new_database_has_the_one_owner_without_a_pin() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let staff: Vec<(i64, String, String, Option<String>)> = conn
        .prepare("SELECT id, name, role, pin_hash FROM staff")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(staff, [(1, "Owner".to_owned(), "owner".to_owned(), None)]);
}

#[test]
fn an_existing_database_keeps_its_page_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        // A database of an earlier Petstore: SQLite's default pages, schema version 1.
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "page_size", 4096).unwrap();
        migrations().to_version(&mut conn, 1).unwrap();
    }
    let store = Store::open(&path).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0)).unwrap();
    assert_eq!(page_size, 4096);
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version as usize, SCHEMA_VERSION, "and is migrated all the same");
}

#[test]
fn a_database_from_a_newer_version_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;").unwrap();
    }
    let before = std::fs::read(&path).unwrap();

    let error = Store::open(&path).err().expect("a newer schema is refused");
    assert!(matches!(error, OpenError::NewerSchema { found: 99, .. }), "{error}");
    assert!(error.to_string().contains("newer"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "not one byte changed");
    assert!(!dir.path().join("future.db-wal").exists(), "no WAL was started");
}

#[test]
fn a_file_that_is_not_a_database_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    std::fs::write(&path, "shopping list: kibble, hay").unwrap();
    let error = Store::open(&path).err().unwrap();
    assert!(matches!(error, OpenError::NotADatabase { .. }), "{error}");
}

/// Another program's database, with or without a schema version of its own: neither
/// migrated (which would add our tables to its file) nor served (every request would fail).
#[test]
fn a_database_of_another_program_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, version) in [("unversioned.db", 0), ("same-version.db", SCHEMA_VERSION), ("older.db", 1)] {
        let path = dir.path().join(name);
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(&format!(
                "CREATE TABLE recipes (title TEXT); PRAGMA user_version = {version};"
            ))
            .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let error = Store::open(&path).err().expect("a foreign database is refused");
        assert!(matches!(error, OpenError::Foreign { .. }), "{name}: {error}");
        assert!(error.to_string().contains("another program"), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name}: not one byte changed");
    }
    // An empty file at version 0 is a new database, as `Store::open` makes one.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    drop(Store::open(&empty).unwrap());
}

/// What a newer Petstore really leaves behind: a WAL-mode database with data, closed
/// cleanly. Opening it must not write a byte, and must leave no -wal or -shm beside it.
#[test]
fn a_real_newer_database_in_wal_mode_is_refused_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("petstore.db");
    drop(Store::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO categories (name, name_folded, created_at) VALUES ('Dogs', 'dogs', '2030-01-01T00:00:00Z');
             CREATE TABLE from_the_future (x);
             PRAGMA user_version = {};",
            SCHEMA_VERSION + 1
        ))
        .unwrap();
        let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }
    let files = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into())
            .collect();
        names.sort();
        names
    };
    assert_eq!(files(dir.path()), ["petstore.db"], "closed cleanly: no -wal, no -shm");
    let before = std::fs::read(&path).unwrap();

    for _ in 0..2 {
        let error = Store::open(&path).err().expect("a newer schema is refused");
        assert!(
            matches!(error, OpenError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1),
            "{error}"
        );
        assert!(error.to_string().contains("left untouched"), "{error}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "not one byte changed");
    assert_eq!(files(dir.path()), ["petstore.db"], "no -wal or -shm left behind");
}

/// Every order writes two changes (its own and its pet's stock) through the feed's
/// triggers. A CHECK of `x IN (a, b, c)` would build a temporary b-tree of the list for each
/// of them (migrations/sqlite/0011 says what that cost); the checks compare in line, and
/// still refuse what they should.
#[test]
fn the_change_feeds_checks_build_no_temporary_b_tree_and_still_refuse_unknown_names() {
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    migrations().to_latest(&mut conn).unwrap();
    let legacy: i64 = conn.pragma_query_value(None, "legacy_alter_table", |r| r.get(0)).unwrap();
    assert_eq!(legacy, 0, "0011 turns legacy_alter_table back off");

    let insert =
        "INSERT INTO changes (entity, entity_id, action, at) VALUES (?1, 7, ?2, '2026-11-24T00:00:00Z')";
    let mut explain = conn.prepare(&format!("EXPLAIN {insert}")).unwrap();
    let opcodes: Vec<String> =
        explain.query_map(["order", "created"], |r| r.get(1)).unwrap().map(Result::unwrap).collect();
    assert!(opcodes.iter().any(|op| op == "Insert"), "{opcodes:?}");
    assert!(!opcodes.iter().any(|op| op == "OpenEphemeral"), "a temporary b-tree per change: {opcodes:?}");

    for (entity, action) in
        [("pet", "created"), ("inventory", "updated"), ("order", "deleted"), ("shop", "reset")]
    {
        conn.execute(insert, [entity, action]).unwrap();
    }
    for (entity, action) in [("pets", "created"), ("order", "sold"), ("", "created")] {
        let refused = conn.execute(insert, [entity, action]).unwrap_err();
        assert!(refused.to_string().contains("CHECK constraint failed"), "{entity}/{action}: {refused}");
    }
}
