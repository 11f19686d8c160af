//! CSV files in and out of the shop: an export written where the clerk chose, an import
//! read from the file they picked (a dry run first, then for real). The paths come from the
//! system's file dialogs ([`choose_file`]), or typed.

use std::path::PathBuf;

use chrono::NaiveDate;
use futures_util::StreamExt;
use petstore::Served;
use petstore::domain::{DayRange, IMPORT_MAX_LINES, ImportReport, parse_pets_csv};
use petstore::exports::Export;
use serde::Deserialize;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::shell::Shell;

/// The largest file an import reads, as `POST /imports/pets` takes.
const IMPORT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Which export.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExportKind {
    Pets,
    Inventory,
    Orders,
}

/// What a file dialog is for.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum FileChoice {
    /// Where to save a file named `name` by default.
    Save { name: String },
    /// A CSV file to open.
    Open,
}

/// Asks the system's file dialog for a CSV file's path; `None` when the clerk cancels.
#[tauri::command]
pub async fn choose_file<R: Runtime>(
    app: AppHandle<R>,
    choice: Input<FileChoice>,
) -> CommandResult<Option<String>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let dialog = app.dialog().file().add_filter("CSV", &["csv"]);
    match choice.0 {
        FileChoice::Save { name } => dialog.set_file_name(name).save_file(move |p| {
            let _ = tx.send(p);
        }),
        FileChoice::Open => dialog.pick_file(move |p| {
            let _ = tx.send(p);
        }),
    }
    let picked = rx.await.map_err(CommandError::internal)?;
    Ok(picked.and_then(|p| p.into_path().ok()).map(|p| p.display().to_string()))
}

/// Writes an export to `path` (the orders of `from`..`to` only, when both are given) and
/// answers the bytes written. The file appears whole or not at all: it is written beside
/// and renamed into place. It is the user's alone (0600 on Unix): the orders export
/// carries customers' names and phones.
#[tauri::command]
pub async fn export_csv(
    shell: State<'_, Shell>,
    kind: Input<ExportKind>,
    from: Input<Option<NaiveDate>>,
    to: Input<Option<NaiveDate>>,
    path: Input<String>,
) -> CommandResult<u64> {
    let path = file_path(&path.0)?;
    let store = served(&shell)?;
    let export = match (kind.0, from.0, to.0) {
        (ExportKind::Pets, ..) => Export::Pets,
        (ExportKind::Inventory, ..) => Export::Inventory,
        (ExportKind::Orders, None, None) => Export::orders(&*store.shop, None).await?,
        (ExportKind::Orders, Some(from), Some(to)) => {
            Export::orders(&*store.shop, Some(DayRange::any(from, to).map_err(CommandError::validation)?))
                .await?
        }
        (ExportKind::Orders, ..) => {
            return Err(CommandError::validation("give both from and to, or neither"));
        }
    };
    write_csv(&path, export.csv(store.exports)).await
}

/// Imports the pets of the CSV file at `path` (the columns of `POST /imports/pets`), or with
/// `dry_run` says what it would do. All or nothing: a bad line is named and nothing written.
#[tauri::command]
pub async fn import_pets_csv(
    shell: State<'_, Shell>,
    path: Input<String>,
    create_categories: Input<bool>,
    dry_run: Input<bool>,
) -> CommandResult<ImportReport> {
    let path = file_path(&path.0)?;
    let unreadable =
        |e: std::io::Error| CommandError::validation(format!("could not read {}: {e}", path.display()));
    let too_big = |size: u64| {
        CommandError::validation(format!(
            "{} is {:.1} MB or more; a file of pets may be at most 10 MB ({IMPORT_MAX_LINES} lines): split it",
            path.display(),
            size as f64 / 1_048_576.0
        ))
    };
    // The file as opened, not as named: a device (`/dev/zero` has a length of 0 and never
    // ends), a pipe or a folder is refused; and what is read is bounded whatever the length
    // said, as the file may grow while it is read.
    let file = tokio::fs::File::open(&path).await.map_err(unreadable)?;
    let found = file.metadata().await.map_err(unreadable)?;
    if !found.is_file() {
        return Err(CommandError::validation(format!("could not read {}: it is not a file", path.display())));
    }
    if found.len() > IMPORT_MAX_BYTES {
        return Err(too_big(found.len()));
    }
    let mut text = Vec::with_capacity(found.len() as usize);
    file.take(IMPORT_MAX_BYTES + 1).read_to_end(&mut text).await.map_err(unreadable)?;
    if text.len() as u64 > IMPORT_MAX_BYTES {
        return Err(too_big(text.len() as u64));
    }
    let rows = parse_pets_csv(&text)?;
    let imports: std::sync::Arc<dyn petstore::Imports> = match shell.backend().target() {
        // Written as the person signed in, once they may edit the catalogue.
        crate::Target::Local => {
            let actor = shell.allowed(petstore::domain::Operation::ImportPets).await?;
            petstore::Imports::imports_acting(shell.backend().local(), actor)
        }
        crate::Target::Remote { .. } => served(&shell)?.imports.shared()?,
    };
    Ok(imports.import_pets(rows, create_categories.0, dry_run.0).await?)
}

/// Writes the CSV `chunks` to `path` and answers the bytes written. The file appears whole
/// or not at all: it is written beside and renamed into place. It is the user's alone
/// (0600 on Unix): exports carry customers' names and phones, and staff's doings.
pub(crate) async fn write_csv<B: AsRef<[u8]>>(
    path: &std::path::Path,
    chunks: impl futures_util::Stream<Item = petstore::Result<B>>,
) -> CommandResult<u64> {
    let unwritable =
        |e: std::io::Error| CommandError::validation(format!("could not write {}: {e}", path.display()));
    // Only a file is replaced: a typed `/dev/...` or a folder is refused before anything is
    // written.
    match tokio::fs::metadata(&path).await {
        Ok(found) if !found.is_file() => {
            return Err(CommandError::validation(format!(
                "could not write {}: it is not a file",
                path.display()
            )));
        }
        _ => {}
    }
    // Written beside the file and renamed into place: whoever opens `path` finds the last
    // whole export or this one, never a part. A part is removed whatever stopped it.
    let partial = path.with_extension("csv.part");
    let written = async {
        let mut file = create_private(&partial).await.map_err(unwritable)?;
        let mut written = 0_u64;
        let mut chunks = std::pin::pin!(chunks);
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk?;
            file.write_all(chunk.as_ref()).await.map_err(unwritable)?;
            written += chunk.as_ref().len() as u64;
        }
        file.sync_all().await.map_err(unwritable)?;
        tokio::fs::rename(&partial, &path).await.map_err(unwritable)?;
        Ok::<_, CommandError>(written)
    }
    .await;
    if written.is_err() {
        let _ = tokio::fs::remove_file(&partial).await;
    }
    written
}

/// A new file at `path` that only its owner may read (0600 on Unix), replacing any left
/// there: a part left by an export that was stopped may have had another mode.
async fn create_private(path: &std::path::Path) -> std::io::Result<tokio::fs::File> {
    match tokio::fs::remove_file(path).await {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path).await
}

/// The shop's database as the local API serves it: the local one, or the mirror of the
/// remote one.
fn served(shell: &Shell) -> CommandResult<Served> {
    shell.served().ok_or_else(|| {
        CommandError::validation("the remote shop is not copied to this computer yet; try again in a moment")
    })
}

pub(crate) fn file_path(raw: &str) -> CommandResult<PathBuf> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(CommandError::validation("choose a file first"));
    }
    let path = PathBuf::from(raw);
    if !path.is_absolute() {
        return Err(CommandError::validation(format!(
            "{raw:?} is not a full path (like /home/shop/pets.csv)"
        )));
    }
    Ok(path)
}
