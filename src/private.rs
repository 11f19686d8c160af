//! Petstore's files are for their owner's eyes only: the database holds the shop's
//! customers and orders, the key files and the app's settings the keys. Every folder the
//! server or the app creates for them is 0700 and every file 0600, whatever the umask; ones
//! already there (made by an older version, copied, unpacked from an archive) are
//! tightened at start, with a log line, so nobody wonders why their permissions changed.
//! (SQLite gives a database's `-wal` and `-shm` the mode of the database file.)
//!
//! On Windows the data folder is in the user's profile, whose ACL already keeps other users
//! out, and files inherit it: nothing to do there.

use std::io;
use std::path::Path;

/// Creates `dir` and any missing parent, each new one private (0700); one that exists is
/// left as it is.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates `path` as a new, empty, private (0600) file; fails if it exists.
pub fn create_file(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Makes sure `path` exists as a private file (new ones hold `initial`) before something
/// writes it in place: the settings store writes with `fs::write`, which keeps the mode of
/// a file that exists and gives a new one the umask's. A file that exists is tightened if
/// need be.
pub fn ensure_file(path: &Path, initial: &[u8]) -> io::Result<()> {
    match create_file(path) {
        Ok(mut file) => io::Write::write_all(&mut file, initial),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            tighten_file(path);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Takes away group and other access from a data folder, if it has any.
pub fn tighten_dir(dir: &Path) {
    tighten(dir, 0o700);
}

/// Takes away group and other access (and execution) from one of our files, if it exists
/// and has any. Only a regular file: a symbolic link is left alone, since changing the file
/// it points to is not ours to decide.
pub fn tighten_file(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => tighten(path, 0o600),
        _ => {}
    }
}

#[cfg(unix)]
fn tighten(path: &Path, private: u32) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else { return };
    let mode = meta.permissions().mode() & 0o7777;
    if mode & !private == 0 {
        return;
    }
    let now = mode & private;
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(now)) {
        Ok(()) => tracing::warn!(
            path = %path.display(), was = format_args!("{mode:o}"), now = format_args!("{now:o}"),
            "tightened permissions: the file was readable by other users; it is now private"
        ),
        Err(e) => tracing::warn!(
            path = %path.display(), was = format_args!("{mode:o}"), error = %e,
            "cannot tighten permissions: the file is readable by other users"
        ),
    }
}

#[cfg(not(unix))]
fn tighten(_path: &Path, _private: u32) {}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_loose_file_loses_group_other_and_execute_bits_and_a_private_one_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        for (before, after) in [(0o644, 0o600), (0o777, 0o600), (0o400, 0o400), (0o600, 0o600)] {
            std::fs::write(&file, "{}").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(before)).unwrap();
            tighten_file(&file);
            assert_eq!(mode(&file), after, "{before:o}");
        }
    }

    #[test]
    fn ensure_file_creates_a_private_file_and_keeps_an_existing_ones_content() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        ensure_file(&file, b"{}").unwrap();
        assert_eq!((mode(&file), std::fs::read_to_string(&file).unwrap()), (0o600, "{}".to_owned()));
        std::fs::write(&file, "{\"a\":1}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
        ensure_file(&file, b"{}").unwrap();
        assert_eq!((mode(&file), std::fs::read_to_string(&file).unwrap()), (0o600, "{\"a\":1}".to_owned()));
    }

    #[test]
    fn a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "x").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        tighten_file(&link);
        assert_eq!(mode(&target), 0o644);
    }
}
