//! When the app cannot start, its window says why and offers what helps, instead of the
//! process ending with no window at all. `run_app`'s setup keeps the failure as state
//! in place of the `Shell`; the UI asks for it first thing (`startup_failure`) and shows
//! the failure screen instead of the shop.

use std::error::Error;
use std::path::Path;

use petstore::store::OpenError;
use serde::Serialize;

use crate::folder_lock::FolderLockError;

/// Why the app could not start, as its window shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartupFailure {
    pub kind: StartupFailureKind,
    /// What happened, naming the file or folder.
    pub message: String,
    /// The data folder, which the window offers to open.
    pub data_dir: String,
}

/// What kind of failure, so the window can offer what helps with it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StartupFailureKind {
    /// Another Petstore has the data folder open.
    AlreadyOpen,
    /// The database was written by a newer Petstore.
    NewerDatabase,
    /// The database is damaged, or is not a Petstore database.
    DamagedDatabase,
    /// The data folder (or the database in it) cannot be written.
    UnwritableFolder,
    /// Anything else; the message says what.
    Other,
}

impl StartupFailure {
    /// The failure `error` stopped the start with, in the data folder `dir`.
    pub fn from_error(dir: &Path, error: &(dyn Error + 'static)) -> Self {
        let kind = if let Some(e) = error.downcast_ref::<FolderLockError>() {
            match e {
                FolderLockError::Taken(_) => StartupFailureKind::AlreadyOpen,
                FolderLockError::Unwritable { .. } => StartupFailureKind::UnwritableFolder,
            }
        } else if let Some(e) = error.downcast_ref::<OpenError>() {
            match e {
                OpenError::NewerSchema { .. } => StartupFailureKind::NewerDatabase,
                OpenError::NotADatabase { .. } | OpenError::Foreign { .. } => {
                    StartupFailureKind::DamagedDatabase
                }
                OpenError::Unusable { .. } => StartupFailureKind::UnwritableFolder,
                OpenError::Migration { .. } => StartupFailureKind::Other,
            }
        } else if error.downcast_ref::<std::io::Error>().is_some() {
            StartupFailureKind::UnwritableFolder
        } else {
            StartupFailureKind::Other
        };
        Self { kind, message: error.to_string(), data_dir: dir.display().to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_has_its_kind_and_keeps_its_message() {
        let dir = Path::new("/srv/shop");
        let taken = FolderLockError::Taken(dir.to_path_buf());
        let failure = StartupFailure::from_error(dir, &taken);
        assert_eq!(failure.kind, StartupFailureKind::AlreadyOpen);
        assert_eq!(failure.message, "Petstore is already open on the data folder /srv/shop");
        assert_eq!(failure.data_dir, "/srv/shop");

        let newer = OpenError::NewerSchema { path: dir.join("petstore.db"), found: 99, supported: 10 };
        assert_eq!(StartupFailure::from_error(dir, &newer).kind, StartupFailureKind::NewerDatabase);
        let damaged = OpenError::NotADatabase { path: dir.join("petstore.db") };
        assert_eq!(StartupFailure::from_error(dir, &damaged).kind, StartupFailureKind::DamagedDatabase);
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(StartupFailure::from_error(dir, &denied).kind, StartupFailureKind::UnwritableFolder);
    }
}
