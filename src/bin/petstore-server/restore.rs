//! `petstore-server restore --from FILE`: put a backup back in place of the database.

use std::path::{Path, PathBuf};

use petstore::store::{self, SCHEMA_VERSION};

#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The backup to restore (made by `backup` or by the app's Settings). It is checked
    /// completely before the database is replaced.
    #[arg(long)]
    from: PathBuf,
}

pub async fn run(db: &Path, args: RestoreArgs) -> Result<(), String> {
    let (from, target) = (args.from.clone(), db.to_path_buf());
    let restored = tokio::task::spawn_blocking(move || store::restore(&from, &target))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let upgraded = if restored.from_version < SCHEMA_VERSION {
        format!(", upgraded from schema version {} to {SCHEMA_VERSION}", restored.from_version)
    } else {
        String::new()
    };
    println!(
        "Restored {} from {} ({} pets, {} orders{upgraded}).",
        db.display(),
        args.from.display(),
        restored.pets,
        restored.orders
    );
    if let Some(kept) = restored.kept {
        println!("The database it replaced is kept as {}.", kept.display());
    }
    Ok(())
}
