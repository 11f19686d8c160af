//! Staff at the till: who is serving, signing in and out (the till's lock), a manager's
//! approval of one refused action (in local and remote mode, `till_staff.rs`); managing the
//! staff (owners only), the activity log and its CSV file (local mode: the app's own store
//! keeps them; a server's are managed there), and how long the till waits idle before it
//! locks. The sign-in itself is `petstore::staff`'s; each command names its
//! `domain::Operation`, whose permission the signed-in person's role is checked against
//! here in Rust.

use std::sync::Arc;

use petstore::domain::{
    ActivityEntry, ActivityFilter, ActivityKind, NewStaffMember, Operation, Paged, Pin, StaffId, StaffMember,
    StaffPatch, StaffRef, Timestamp,
};
use petstore::engine::Staff;
use petstore::staff::{add_member, change_member};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime, State};

use super::PageQuery;
use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::settings::persist;
use crate::shell::Shell;
use crate::till_staff::Serving;

/// Every staff member, active or not, by name: the sign-in list and Settings' staff (in
/// remote mode the server's, as the till's mirror has them).
#[tauri::command]
pub async fn list_staff(shell: State<'_, Shell>) -> CommandResult<Vec<StaffMember>> {
    shell.staff_list().await
}

/// Who is serving (a shop of one PIN-less owner is signed in as that owner).
#[tauri::command]
pub async fn current_staff(shell: State<'_, Shell>) -> CommandResult<Serving> {
    shell.serving().await
}

/// Signs a member in for their shift; whoever was signed in is signed out.
#[tauri::command]
pub async fn sign_in(
    shell: State<'_, Shell>,
    staff_id: Input<StaffId>,
    pin: Input<Option<Pin>>,
) -> CommandResult<Serving> {
    shell.sign_in(staff_id.0, pin.0).await?;
    shell.serving().await
}

/// Locks the till: the shift ends; the next person signs in.
#[tauri::command]
pub async fn sign_out(shell: State<'_, Shell>) -> CommandResult<Serving> {
    shell.sign_out().await;
    shell.serving().await
}

/// A manager's PIN, approving the one action the signed-in person was just refused; the
/// window tries that action again.
#[tauri::command]
pub async fn approve(
    shell: State<'_, Shell>,
    staff_id: Input<StaffId>,
    pin: Input<Pin>,
) -> CommandResult<StaffRef> {
    shell.approve(staff_id.0, pin.0).await
}

#[tauri::command]
pub async fn create_staff(
    shell: State<'_, Shell>,
    member: Input<NewStaffMember>,
) -> CommandResult<StaffMember> {
    let store = shell.local_staff()?;
    let by = shell.allowed(Operation::AddStaff).await?;
    Ok(add_member(store, member.0, &by).await?)
}

/// Changes a member's name, role, PIN (which also ends a lockout) or whether they are
/// active; the shop always keeps an active owner.
#[tauri::command]
pub async fn update_staff(
    shell: State<'_, Shell>,
    staff_id: Input<StaffId>,
    patch: Input<StaffPatch>,
) -> CommandResult<StaffMember> {
    let store = shell.local_staff()?;
    let by = shell.allowed(Operation::ChangeStaff).await?;
    let changed = change_member(store, staff_id.0, patch.0, &by).await?;
    shell.refresh_serving(&changed).await;
    Ok(changed)
}

/// The activity log's filters as the screen sends them: a person (who acted or approved),
/// a kind, and a time span (`from` inclusive, `to` exclusive, RFC 3339).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActivityQuery {
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub staff_id: Option<StaffId>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub kind: Option<ActivityKind>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub from: Option<Timestamp>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub to: Option<Timestamp>,
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub page: PageQuery,
}

impl ActivityQuery {
    fn filter(&self) -> ActivityFilter {
        ActivityFilter { staff: self.staff_id, kind: self.kind, from: self.from, to: self.to }
    }
}

#[tauri::command]
pub async fn list_activity(
    shell: State<'_, Shell>,
    query: Input<ActivityQuery>,
) -> CommandResult<Paged<ActivityEntry>> {
    let store = shell.local_staff()?;
    shell.allowed(Operation::ViewActivity).await?;
    Ok(store.list_activity(query.0.filter(), query.0.page.parse()?).await?)
}

/// Writes the log's entries that `query` filters (all pages) to `path` as CSV, as the
/// other exports are written; answers the bytes written.
#[tauri::command]
pub async fn export_activity_csv(
    shell: State<'_, Shell>,
    query: Input<ActivityQuery>,
    path: Input<String>,
) -> CommandResult<u64> {
    let path = super::files::file_path(&path.0)?;
    let store = shell.local_staff()?.clone();
    shell.allowed(Operation::ViewActivity).await?;
    let staff: Arc<dyn Staff> = Arc::new(store);
    super::files::write_csv(&path, petstore::exports::activity_csv(staff, query.0.filter())).await
}

/// How long the till waits idle before it locks, in minutes; 0 never locks.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TillLock {
    pub idle_minutes: u32,
}

impl Default for TillLock {
    /// Five minutes: a till left alone is locked before long, but not while a clerk walks
    /// to the shelf and back.
    fn default() -> Self {
        Self { idle_minutes: 5 }
    }
}

/// Where [`TillLock`] is kept in `settings.json`.
const TILL_LOCK: &str = "tillLock";

#[tauri::command]
pub fn get_till_lock<R: Runtime>(app: AppHandle<R>, shell: State<'_, Shell>) -> CommandResult<TillLock> {
    Ok(persist::load_value(&app, shell.dir(), TILL_LOCK)?
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_default())
}

/// Saves the idle time; a setting of the till, so it needs `change_settings` (a cashier
/// may not switch the lock off).
#[tauri::command]
pub async fn save_till_lock<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    lock: Input<TillLock>,
) -> CommandResult<TillLock> {
    if lock.0.idle_minutes > 24 * 60 {
        return Err(CommandError::validation("idleMinutes must be at most 1440 (a day); 0 never locks"));
    }
    shell.allowed(Operation::ChangeTillSettings).await?;
    persist::save_value(&app, shell.dir(), TILL_LOCK, Some(serde_json::json!(lock.0)))?;
    Ok(lock.0)
}
