//! One app per data folder. The single-instance plugin (see `main.rs`) sends a second
//! launch to the first window, but only where the desktop has a session bus and only for
//! launches that see the same folder; this lock covers every other way of starting, so two
//! apps never write one database, one settings file and one local API key at once.
//!
//! The lock is the operating system's advisory lock on `petstore.lock` in the folder
//! (`flock` on Linux and macOS, `LockFileEx` on Windows): held while the app runs, released
//! by the system when the process ends, however it ends, so a crash never leaves it stale.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The lock file's name in the data folder.
pub const FILE_NAME: &str = "petstore.lock";

/// The folders this process holds. The system's lock keeps other processes out; within one
/// process the tests start the app again on a folder while the first is still in memory,
/// and those share the lock rather than refuse each other.
static HELD: Mutex<Vec<(PathBuf, Weak<File>)>> = Mutex::new(Vec::new());

/// The data folder, held for this app until dropped.
#[derive(Debug)]
pub struct FolderLock {
    _file: Arc<File>,
}

/// Why the folder could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum FolderLockError {
    #[error("Petstore is already open on the data folder {}", .0.display())]
    Taken(PathBuf),
    #[error("cannot write in the data folder {}: {source}", .dir.display())]
    Unwritable { dir: PathBuf, source: std::io::Error },
}

impl FolderLock {
    pub fn take(dir: &Path) -> Result<Self, FolderLockError> {
        let unwritable = |source| FolderLockError::Unwritable { dir: dir.to_path_buf(), source };
        let path = dir.join(FILE_NAME);
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        held.retain(|(_, file)| file.strong_count() > 0);
        let same = std::fs::canonicalize(dir).map_err(unwritable)?;
        if let Some(file) = held.iter().find(|(held, _)| *held == same).and_then(|(_, file)| file.upgrade()) {
            return Ok(Self { _file: file });
        }
        let file =
            OpenOptions::new().create(true).truncate(false).write(true).open(path).map_err(unwritable)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(FolderLockError::Taken(dir.to_path_buf())),
            Err(TryLockError::Error(e)) => return Err(unwritable(e)),
        }
        let file = Arc::new(file);
        held.push((same, Arc::downgrade(&file)));
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    /// Another process holding the folder: util-linux's `flock` on the same file, holding
    /// the lock itself (`--close`: not its child), so killing it lets go.
    fn held_by_another_process(dir: &Path) -> std::process::Child {
        let mut child = Command::new("flock")
            .args(["--nonblock", "--exclusive", "--close"])
            .arg(dir.join(FILE_NAME))
            .args(["sh", "-c", "echo held; sleep 30"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("util-linux's flock");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line)
            .unwrap();
        assert_eq!(line.trim(), "held");
        child
    }

    #[test]
    fn a_folder_another_process_holds_is_refused_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let mut other = held_by_another_process(dir.path());
        let refused = FolderLock::take(dir.path()).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("Petstore is already open on the data folder {}", dir.path().display())
        );
        other.kill().unwrap();
        other.wait().unwrap();
        FolderLock::take(dir.path()).expect("free once the other process ended");
    }

    /// Whether another process could take the folder now.
    fn free_for_another_process(dir: &Path) -> bool {
        let mut flock = Command::new("flock");
        flock.args(["--nonblock", "--exclusive"]).arg(dir.join(FILE_NAME)).arg("true");
        flock.status().expect("util-linux's flock").success()
    }

    #[test]
    fn this_process_holds_a_folder_until_its_last_holder_drops_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = FolderLock::take(dir.path()).unwrap();
        let again = FolderLock::take(dir.path()).expect("shared within the process");
        drop(first);
        assert!(!free_for_another_process(dir.path()), "still held while one holder is left");
        drop(again);
        assert!(free_for_another_process(dir.path()), "let go with the last holder");
    }

    #[test]
    fn a_folder_that_is_not_there_cannot_be_taken() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        assert!(matches!(FolderLock::take(&missing), Err(FolderLockError::Unwritable { .. })));
    }
}
