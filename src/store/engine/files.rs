//! The database's files are private: an order names a customer and what they bought, and
//! every local user of a shared till could read a world-readable file. New databases are
//! created 0600 (SQLite gives its `-wal` and `-shm` the main file's mode), new data folders
//! 0700, and files left readable by others (by an older Petstore, or by hand) are
//! tightened when the database is opened, with a log line.

use std::io;
use std::path::Path;

/// Creates `dir` and any missing parent, each new one readable by its owner alone.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Before SQLite opens `db`: creates it empty and private when it does not exist (SQLite
/// takes an empty file for a new database), else tightens it and its `-wal` and `-shm`.
pub(super) fn make_private(db: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(db) {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            let file = Path::new(&name);
            let Ok(meta) = std::fs::metadata(file) else { continue };
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode & 0o700))?;
                tracing::warn!(
                    file = %file.display(),
                    was = format_args!("{mode:o}"),
                    now = format_args!("{:o}", mode & 0o700),
                    "the database file was readable by other users; it is now private"
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = db;
    Ok(())
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
        create_private_dir(&folder).unwrap();
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
