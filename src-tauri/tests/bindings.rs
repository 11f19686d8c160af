//! The UI's TypeScript types are generated from the Rust types (ts-rs) into
//! `ui/src/lib/bindings/`. This test fails when they are stale; `make bindings` (which
//! runs it with `UPDATE_BINDINGS=1`) writes them anew.
#![cfg(feature = "ts")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use petstore::ErrorCode;
use petstore::domain::*;
use petstore::mirror::SyncStatus;
use petstore::store::{Change, IssuedKey, KeyInfo, Scope};
use petstore_desktop::changes::DataChanged;
use petstore_desktop::commands::PageQuery;
use petstore_desktop::commands::files::{ExportKind, FileChoice};
use petstore_desktop::commands::inventory::InventoryQuery;
use petstore_desktop::commands::orders::OrderQuery;
use petstore_desktop::commands::pets::{PetQuery, PetRow};
use petstore_desktop::commands::staff::{ActivityQuery, TillLock};
use petstore_desktop::commands::updates::UpdateSettings;
use petstore_desktop::updates::UpdateOffer;
use petstore_desktop::*;
use ts_rs::{Config, TS};

/// Exports every type the UI uses (and what they refer to) into `dir`.
fn export_all(dir: &Path) {
    let cfg = Config::new().with_large_int("number").with_out_dir(dir);
    macro_rules! export {
        ($($ty:ty),* $(,)?) => { $( <$ty>::export_all(&cfg).unwrap(); )* };
    }
    export!(
        Pet,
        NewPet,
        PetPatch,
        PetStatus,
        Category,
        NewCategory,
        Order,
        NewOrder,
        OrderPatch,
        InventoryItem,
        InventoryUpdate,
        NewInventoryAdjustment,
        InventoryAdjustment,
        StockEntry,
        StockEntryKind,
        Paged<Pet>,
        PetRow,
        Paged<PetRow>,
        ErrorCode,
        Change,
        DataChanged,
        CommandError,
        PetQuery,
        OrderQuery,
        InventoryQuery,
        PageQuery,
        Settings,
        SettingsView,
        SettingsInput,
        BackendKind,
        LocalApiSettings,
        UiPreferences,
        ThemeChoice,
        Language,
        LanguageChoice,
        LocalApiStatus,
        Status,
        ConnectionReport,
        KeyInfo,
        Scope,
        IssuedKey,
        SyncStatus,
        OutboxEntry,
        ShopSettings,
        SalesDay,
        ImportReport,
        ExportKind,
        FileChoice,
        StartupFailure,
        UpdateSettings,
        UpdateOffer,
        Role,
        StaffMember,
        StaffRef,
        Actor,
        ActivityEntry,
        ActivityKind,
        Subject,
        Paged<ActivityEntry>,
        Serving,
        NewStaffMember,
        StaffPatch,
        ActivityQuery,
        TillLock,
    );
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "ts"))
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read_to_string(&p).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn typescript_bindings_are_up_to_date() {
    let committed: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "..", "ui", "src", "lib", "bindings"].iter().collect();
    let fresh = tempfile::tempdir().unwrap();
    export_all(fresh.path());
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        let _ = std::fs::remove_dir_all(&committed);
        std::fs::create_dir_all(&committed).unwrap();
        export_all(&committed);
        return;
    }
    assert_eq!(
        files(&committed),
        files(fresh.path()),
        "ui/src/lib/bindings is stale: run `make bindings` and commit the result"
    );
}
