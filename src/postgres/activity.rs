//! The activity log on PostgreSQL: an entry written in the transaction of the write it
//! records ([`record`]), and the log read newest first, a page at a time ([`list`]). What
//! an entry says is `domain::activity`'s; the actor is kept as the JSON of
//! `domain::Actor`, with its people's ids beside it for the filter by person.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::paging::{self, Filter, List, limit_offset};
use super::pg;
use super::types::col;
use crate::domain::{
    ActivityEntry, ActivityFilter, Actor, NewActivity, Page, Paged, StaffId, Subject, Timestamp,
};
use crate::error::{Error, Result};

/// The columns an entry is written with, from `$1`, in [`Values`]' order; for a statement
/// that writes one beside its own write (the order's, see `orders.rs`).
pub(super) const INSERT_COLUMNS: &str =
    "at, kind, subject_entity, subject_id, staff_id, approver_id, actor, detail";

/// An entry as bound parameters.
pub(super) struct Values {
    at: String,
    kind: &'static str,
    entity: Option<String>,
    id: Option<String>,
    staff: Option<i64>,
    approver: Option<i64>,
    actor: String,
    detail: Option<String>,
}

impl Values {
    pub(super) fn of(entry: &NewActivity, at: Timestamp) -> Result<Self> {
        let (staff, approver) = entry.staff_ids();
        Ok(Self {
            at: at.to_string(),
            kind: entry.kind.as_str(),
            entity: entry.subject.as_ref().map(|s| s.entity.clone()),
            id: entry.subject.as_ref().map(|s| s.id.clone()),
            staff: staff.map(StaffId::get),
            approver: approver.map(StaffId::get),
            actor: actor_json(&entry.actor)?,
            detail: entry.detail.clone(),
        })
    }

    pub(super) fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 8] {
        [&self.at, &self.kind, &self.entity, &self.id, &self.staff, &self.approver, &self.actor, &self.detail]
    }

    /// The parameters the order's one statement binds (`orders::place_fast`): kind, entity,
    /// staff, approver and detail; the time, the actor and the order's id it has already.
    pub(super) fn for_the_order(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 5] {
        [&self.kind, &self.entity, &self.staff, &self.approver, &self.detail]
    }
}

/// The actor as a record keeps it (`placed_by`, `made_by`, the log's `actor`).
pub(super) fn actor_json(actor: &Actor) -> Result<String> {
    serde_json::to_string(actor).map_err(Error::internal)
}

/// An actor a record kept; `None` for a record made before staff.
pub(super) fn actor_of(json: Option<&str>) -> Result<Option<Actor>> {
    json.map(|json| serde_json::from_str(json).map_err(Error::internal)).transpose()
}

/// Writes `entry` in the transaction `c`, at the time of the write it records.
pub(super) async fn record(c: &impl GenericClient, entry: &NewActivity) -> Result<()> {
    let values = Values::of(entry, Timestamp::now())?;
    let sql = format!("INSERT INTO activity ({INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)");
    c.execute(&c.prepare_cached(&sql).await.map_err(pg)?, &values.params()).await.map_err(pg)?;
    Ok(())
}

const COLUMNS: &str = "id, at, kind, subject_entity, subject_id, actor, detail";

fn from_row(r: &Row, at: usize) -> Result<ActivityEntry> {
    let entity: Option<String> = col(r, at + 3)?;
    let id: Option<String> = col(r, at + 4)?;
    Ok(ActivityEntry {
        id: col(r, at)?,
        at: col(r, at + 1)?,
        kind: col::<&str>(r, at + 2)?.parse()?,
        subject: entity.zip(id).map(|(entity, id)| Subject { entity, id }),
        actor: actor_of(col::<Option<&str>>(r, at + 5)?)?,
        detail: col(r, at + 6)?,
    })
}

/// The log under `filter`, newest first. A person is found as the one who acted and as the
/// one who approved (each an index of its own, migrations/postgres/0012).
pub(super) async fn list(
    c: &impl GenericClient,
    filter: &ActivityFilter,
    page: Page,
) -> Result<Paged<ActivityEntry>> {
    let mut w = Filter::default();
    if let Some(staff) = filter.staff {
        let staff = w.bind(staff.get());
        w.and_sql(&format!("(staff_id = {staff} OR approver_id = {staff})"));
    }
    if let Some(kind) = filter.kind {
        w.and("kind = $?", kind.as_str());
        if let Some(indexed) = kind.index_condition() {
            w.and_sql(&indexed);
        }
    }
    if let Some(from) = filter.from {
        w.and("at >= $?", from.to_string());
    }
    if let Some(to) = filter.to {
        w.and("at < $?", to.to_string());
    }
    let where_sql = w.sql();
    let limit = limit_offset(&mut w, page);
    let list = List {
        columns: "p.id, p.at, p.kind, p.subject_entity, p.subject_id, p.actor, p.detail",
        total: format!("SELECT count(*) FROM activity {where_sql}"),
        page: format!("SELECT {COLUMNS} FROM activity {where_sql} ORDER BY id DESC {limit}"),
        order: "p.id DESC",
    };
    paging::page(c, list, &w, |r| from_row(r, 1)).await
}
