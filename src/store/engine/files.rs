//! The database's files are private (see `crate::private`): a new database is created
//! 0600 before SQLite opens it, so that its `-wal` and `-shm`, which SQLite gives the main
//! file's mode, are private too; files of ours left readable by others are tightened when
//! the database is opened.

use std::io;
use std::path::{Path, PathBuf};

use crate::private;

/// Before SQLite opens `db`: creates it empty and private when it does not exist (SQLite
/// takes an empty file for a new database).
pub(super) fn create_if_new(db: &Path) -> io::Result<()> {
    match private::create_file(db) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        created => created.map(drop),
    }
}

/// Tightens `db`, its `-wal` and `-shm`, once the database is known to be ours: a newer
/// Petstore's, or another program's, is left untouched, its mode too.
pub(super) fn tighten(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        private::tighten_file(&with_suffix(db, suffix));
    }
}

/// `path` with `suffix` added to its file name: a database's `-wal`, `-shm`, `-journal`.
pub(in crate::store) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_database_and_its_wal_and_shm_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("shop").join("data");
        private::create_dir(&folder).unwrap();
        assert_eq!((mode(&folder), mode(folder.parent().unwrap())), (0o700, 0o700));

        let db = folder.join("petstore.db");
        let store = crate::store::Store::open(&db).unwrap();
        for file in ["petstore.db", "petstore.db-wal", "petstore.db-shm"] {
            assert_eq!(mode(&folder.join(file)), 0o600, "{file}");
        }
        drop(store);
    }

    #[test]
    fn files_others_could_read_are_tightened_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.db");
        drop(crate::store::Store::open(&db).unwrap());
        for file in ["old.db", "old.db-wal", "old.db-shm"] {
            let path = dir.path().join(file);
            if !path.exists() {
                std::fs::write(&path, b"").unwrap();
            }
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let store = crate::store::Store::open(&db).unwrap();
        for file in ["old.db", "old.db-wal", "old.db-shm"] {
            assert_eq!(mode(&dir.path().join(file)), 0o600, "{file}");
        }
        drop(store);
    }
}
