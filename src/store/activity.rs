//! The activity log's rows: every write of the shop adds its entry here, on the write's own
//! connection, so the entry commits or rolls back with it. What an entry says is decided
//! in `domain::activity`; the list reads newest first, paged like every other list.

use rusqlite::types::Value;
use rusqlite::{Connection, Row, params};

use super::filter::{Filter, Source};
use super::paging;
use crate::domain::{ActivityEntry, ActivityFilter, NewActivity, Page, Paged, Subject, Timestamp};
use crate::error::Result;

/// Writes `entry`, made at `at`.
pub(super) fn record(conn: &Connection, entry: &NewActivity, at: Timestamp) -> Result<()> {
    let (staff, approver) = entry.staff_ids();
    let subject = entry.subject.as_ref();
    conn.prepare_cached(
        "INSERT INTO activity (at, kind, subject_entity, subject_id, staff_id, approver_id, actor, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        at,
        entry.kind.as_str(),
        subject.map(|s| s.entity.as_str()),
        subject.map(|s| s.id.as_str()),
        staff,
        approver,
        entry.actor,
        entry.detail,
    ])?;
    Ok(())
}

/// Writes each of `entries` (a sign-in refused and the lockout it earned), made at `at`.
pub(super) fn record_all(conn: &Connection, entries: &[NewActivity], at: Timestamp) -> Result<()> {
    entries.iter().try_for_each(|entry| record(conn, entry, at))
}

const COLUMNS: &str = "id, at, kind, subject_entity, subject_id, actor, detail";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ActivityEntry> {
    let kind: String = r.get(2)?;
    let subject = match (r.get::<_, Option<String>>(3)?, r.get::<_, Option<String>>(4)?) {
        (Some(entity), Some(id)) => Some(Subject { entity, id }),
        (Some(entity), None) => Some(Subject { entity, id: String::new() }),
        _ => None,
    };
    Ok(ActivityEntry {
        id: r.get(0)?,
        at: r.get(1)?,
        kind: kind.parse().map_err(|e: crate::error::Error| {
            rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, e.message.into())
        })?,
        subject,
        actor: r.get(5)?,
        detail: r.get(6)?,
    })
}

/// The log under `filter`, newest first: a person is found as the one who acted and as the
/// one who approved (each through its own index).
pub(super) fn list(conn: &Connection, filter: &ActivityFilter, page: Page) -> Result<Paged<ActivityEntry>> {
    paging::page(conn, &filtered(filter), SOURCE, "id DESC", page, None, from_row)
}

const SOURCE: Source<'static> = Source { columns: COLUMNS, from: "activity", key: "id" };

fn filtered(filter: &ActivityFilter) -> Filter {
    let mut w = Filter::default();
    if let Some(staff) = filter.staff {
        let id = Value::Integer(staff.get());
        w.and(
            "id IN (SELECT id FROM activity WHERE staff_id = ? UNION SELECT id FROM activity WHERE approver_id = ?)",
            [id.clone(), id],
        );
    }
    if let Some(kind) = filter.kind {
        w.and("kind = ?", [Value::Text(kind.as_str().to_owned())]);
        if let Some(indexed) = kind.index_condition() {
            w.and(&indexed, []);
        }
    }
    if let Some(from) = filter.from {
        w.and("at >= ?", [Value::Text(from.to_string())]);
    }
    if let Some(to) = filter.to {
        w.and("at < ?", [Value::Text(to.to_string())]);
    }
    w
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::super::staff::tests::{add, as_staff, kinds, shop};
    use crate::api::parse_body;
    use crate::domain::*;
    use crate::engine::{Database, Imports, Keys, Petstore, Staff};
    use crate::error::ErrorCode;
    use crate::idempotency::IdempotencyKey;

    fn body<T: serde::de::DeserializeOwned>(json: &str) -> T {
        parse_body(json.as_bytes()).unwrap()
    }

    fn all() -> Page {
        Page::new(100, 0).unwrap()
    }

    /// A pet with stock to sell.
    async fn stocked(store: &impl Petstore) -> PetId {
        let pet = store.create_pet(body(r#"{"name": "Nemo"}"#)).await.unwrap();
        store.set_inventory(pet.id, body(r#"{"quantity": 10}"#)).await.unwrap();
        pet.id
    }

    #[tokio::test]
    async fn an_order_placed_by_a_cashier_names_them_on_the_order_its_history_and_the_log() {
        let (_dir, store) = shop();
        let pet = stocked(&store).await;
        let ana = add(&store, "Ana", Role::Cashier).await;
        let till = store.acting(as_staff(&ana));
        let order = till.place_order(body(&format!(r#"{{"petId": {pet}, "quantity": 2}}"#))).await.unwrap();
        assert_eq!(order.placed_by, Some(as_staff(&ana)));
        assert_eq!(store.get_order(order.id).await.unwrap(), order, "as kept");
        let wire = serde_json::to_value(&order).unwrap();
        assert_eq!(wire["placedBy"]["staff"]["name"], "Ana");
        assert_eq!(
            (wire["completedBy"].clone(), wire["cancelledBy"].clone()),
            (serde_json::Value::Null, serde_json::Value::Null)
        );

        let done = till.update_order(order.id, body(r#"{"complete": true}"#)).await.unwrap();
        assert_eq!(done.completed_by, Some(as_staff(&ana)));
        // Placed and completed within a second, the history shows one counter sale: Ana's.
        let history = store.stock_history(pet, all()).await.unwrap();
        let (orders, counts): (Vec<_>, Vec<_>) =
            history.items.iter().partition(|e| e.kind != StockEntryKind::Adjusted);
        assert!(!orders.is_empty() && orders.iter().all(|e| e.by == Some(as_staff(&ana))), "{orders:?}");
        assert_eq!(counts.iter().map(|e| e.by.clone()).collect::<Vec<_>>(), [Some(Actor::operator())]);

        let mine = ActivityFilter { staff: Some(ana.id), ..ActivityFilter::default() };
        let log = store.list_activity(mine, all()).await.unwrap();
        let entries: Vec<_> =
            log.items.iter().map(|e| (e.kind, e.subject.clone(), e.detail.as_deref())).collect();
        let subject = Some(Subject { entity: "order".into(), id: order.id.to_string() });
        assert_eq!(
            entries,
            [
                (ActivityKind::OrderCompleted, subject.clone(), None),
                (ActivityKind::OrderPlaced, subject, Some("2 × pet 1")),
            ]
        );
        assert_eq!(log.items[0].actor, Some(as_staff(&ana)));
    }

    #[tokio::test]
    async fn a_cashiers_reopen_is_refused_and_changes_nothing_a_managers_approval_lets_it_through() {
        let (_dir, store) = shop();
        let pet = stocked(&store).await;
        let ana = add(&store, "Ana", Role::Cashier).await;
        let bea = add(&store, "Bea", Role::Manager).await;
        let till = store.acting(as_staff(&ana));
        let sale = till.place_order(body(&format!(r#"{{"petId": {pet}, "complete": true}}"#))).await.unwrap();
        assert_eq!(sale.completed_by, Some(as_staff(&ana)), "a counter sale is completed by who placed it");
        let logged = kinds(&store).await.len();

        let reopen: OrderPatch = body(r#"{"complete": false}"#);
        let refused = till.update_order(sale.id, reopen.clone()).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::PermissionDenied);
        assert!(
            refused.message.contains("cashier Ana may not reopen completed orders"),
            "{}",
            refused.message
        );
        assert_eq!(store.get_order(sale.id).await.unwrap(), sale, "unchanged");
        assert_eq!(kinds(&store).await.len(), logged, "nothing logged");
        // Through the counter writes too (the API's path, once per idempotency key).
        let key = IdempotencyKey::new("till", "reopen-1").unwrap();
        let write = CounterWrite::Update { order: sale.id, patch: reopen.clone() };
        let once = till.once(key, write, Utc::now()).await.unwrap();
        assert_eq!(once.outcome.unwrap_err().code, ErrorCode::PermissionDenied);
        assert_eq!(store.get_order(sale.id).await.unwrap(), sale, "unchanged");

        let approved = Actor { approved_by: Some(bea.clone()), ..as_staff(&ana) };
        let reopened = store.acting(approved.clone()).update_order(sale.id, reopen).await.unwrap();
        assert_eq!(
            (reopened.complete, reopened.completed_by, reopened.placed_by),
            (false, None, Some(as_staff(&ana)))
        );
        let log = store
            .list_activity(ActivityFilter { staff: Some(bea.id), ..ActivityFilter::default() }, all())
            .await
            .unwrap();
        assert_eq!(log.items.len(), 1, "found under the approver's name");
        assert_eq!(
            (log.items[0].kind, log.items[0].actor.clone()),
            (ActivityKind::OrderReopened, Some(approved))
        );

        let cancelled = till.cancel_order(sale.id).await.unwrap();
        assert_eq!(cancelled.cancelled_by, Some(as_staff(&ana)));
    }

    #[tokio::test]
    async fn every_write_of_the_shop_logs_its_entry_and_a_repeated_idempotent_write_nothing_new() {
        let (_dir, store) = shop();
        let category = store.create_category(body(r#"{"name": "Fish"}"#)).await.unwrap();
        store.replace_category(category.id, body(r#"{"name": "Fishes"}"#)).await.unwrap();
        let pet = store.create_pet(body(r#"{"name": "Nemo"}"#)).await.unwrap();
        store.update_pet(pet.id, body(r#"{"description": "orange"}"#)).await.unwrap();
        store.replace_pet(pet.id, body(r#"{"name": "Nemo"}"#)).await.unwrap();
        store.set_inventory(pet.id, body(r#"{"quantity": 5}"#)).await.unwrap();
        store.adjust_inventory(pet.id, body(r#"{"delta": 3, "reason": "delivery"}"#)).await.unwrap();
        let key = || IdempotencyKey::new("till", "order-1").unwrap();
        let place = || CounterWrite::Place(body(&format!(r#"{{"petId": {}}}"#, pet.id)));
        let first = store.once(key(), place(), Utc::now()).await.unwrap();
        let again = store.once(key(), place(), Utc::now()).await.unwrap();
        assert!(again.replayed);
        let order = match first.outcome.unwrap() {
            CounterAnswer::Order(order) => order,
            other => panic!("{other:?}"),
        };
        store.update_order(order.id, body(r#"{"note": "gift"}"#)).await.unwrap();
        store.update_order(order.id, body(r#"{"quantity": 2}"#)).await.unwrap();
        store.delete_order(order.id).await.unwrap();
        store.put_settings(store.get_settings().await.unwrap()).await.unwrap();
        let rows = parse_pets_csv("name,category,stock\nRex,Dogs,2\n".as_bytes()).unwrap();
        store.import_pets(rows.clone(), true, true).await.unwrap();
        store.import_pets(rows, true, false).await.unwrap();
        let too_many = format!(r#"{{"petId": {}, "quantity": 1000}}"#, pet.id);
        store.place_order(body(&too_many)).await.unwrap_err();
        store.delete_category(category.id).await.unwrap();
        let key =
            store.create_key(Name::parse("Till 1").unwrap(), crate::api_key::Scope::Read).await.unwrap();
        store.rotate_key(&key.key.name).await.unwrap();
        store.revoke_key(&key.key.name).await.unwrap();

        use ActivityKind::*;
        assert_eq!(
            kinds(&store).await,
            [
                CategoryCreated,
                CategoryUpdated,
                PetCreated,
                PetUpdated,
                PetUpdated,
                StockCounted,
                StockAdjusted,
                OrderPlaced,
                OrderUpdated,
                OrderUpdated,
                OrderDeleted,
                SettingsChanged,
                PetsImported,
                CategoryDeleted,
                KeyCreated,
                KeyRotated,
                KeyRevoked,
            ],
            "one entry per write; the replay, the dry run and the refused order none"
        );
        let log = store.list_activity(ActivityFilter::default(), all()).await.unwrap();
        let detail = |kind| log.items.iter().find(|e| e.kind == kind).and_then(|e| e.detail.clone());
        assert_eq!(detail(StockAdjusted).as_deref(), Some("+3 delivery"));
        assert_eq!(detail(StockCounted).as_deref(), Some("5 (was 0)"));
        assert_eq!(detail(PetsImported).as_deref(), Some("1 pets, 1 new category"));
        assert_eq!(detail(KeyCreated).as_deref(), Some("scope read"));
        assert!(
            log.items.iter().all(|e| e.actor == Some(Actor::operator())),
            "the unacted store is the operator"
        );
        let adjustments = store.list_adjustments(PetId::try_from(2).unwrap(), all()).await.unwrap();
        assert_eq!(adjustments.items[0].made_by, Some(Actor::operator()));
    }

    #[tokio::test]
    async fn the_log_filters_by_person_kind_and_time_and_pages_newest_first() {
        let (_dir, store) = shop();
        let ana = add(&store, "Ana", Role::Cashier).await;
        let bea = add(&store, "Bea", Role::Manager).await;
        let cashier = store.acting(as_staff(&ana));
        for name in ["A", "B", "C"] {
            cashier.create_category(body(&format!(r#"{{"name": "{name}"}}"#))).await.unwrap();
        }
        let approved = store.acting(Actor { approved_by: Some(bea.clone()), ..as_staff(&ana) });
        approved.create_category(body(r#"{"name": "D"}"#)).await.unwrap();
        store.acting(as_staff(&bea)).create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
        // Moved into the past: created 2 and 3, so that a time range picks them.
        store
            .with_writer(|c| {
                Ok(c.execute_batch("UPDATE activity SET at = '2020-01-01T00:00:00Z' WHERE id IN (1, 2)")?)
            })
            .await
            .unwrap();

        let list = |filter: ActivityFilter, page: Page| {
            let store = store.clone();
            async move {
                let paged = store.list_activity(filter, page).await.unwrap();
                (paged.total, paged.items.into_iter().map(|e| e.id).collect::<Vec<_>>())
            }
        };
        let filter = ActivityFilter::default;
        assert_eq!(list(filter(), all()).await, (7, vec![7, 6, 5, 4, 3, 2, 1]));
        assert_eq!(list(filter(), Page::new(2, 2).unwrap()).await, (7, vec![5, 4]));
        assert_eq!(list(filter(), Page::new(2, 6).unwrap()).await, (7, vec![1]));
        let ana_s = ActivityFilter { staff: Some(ana.id), ..filter() };
        assert_eq!(list(ana_s, all()).await, (4, vec![6, 5, 4, 3]));
        let bea_s = ActivityFilter { staff: Some(bea.id), ..filter() };
        assert_eq!(list(bea_s, all()).await, (2, vec![7, 6]), "as the one who acted and who approved");
        let pets = ActivityFilter { kind: Some(ActivityKind::PetCreated), ..filter() };
        assert_eq!(list(pets, all()).await, (1, vec![7]));
        let old = Timestamp::parse("2021-01-01T00:00:00Z").unwrap();
        let before = ActivityFilter { to: Some(old), ..filter() };
        assert_eq!(list(before, all()).await, (2, vec![2, 1]));
        let since = ActivityFilter { from: Some(old), kind: Some(ActivityKind::CategoryCreated), ..filter() };
        assert_eq!(list(since, Page::new(1, 1).unwrap()).await, (4, vec![5]));
        let exactly = ActivityFilter {
            from: Some(Timestamp::parse("2020-01-01T00:00:00Z").unwrap()),
            to: Some(old),
            ..filter()
        };
        assert_eq!(list(exactly, all()).await.0, 2, "from is inclusive");
    }

    /// The plan SQLite makes for a page of the log filtered by `kind`.
    fn plan_by(conn: &rusqlite::Connection, kind: ActivityKind) -> Vec<String> {
        let w = super::filtered(&ActivityFilter { kind: Some(kind), ..ActivityFilter::default() });
        w.page_plan(conn, super::SOURCE, "id DESC")
    }

    #[test]
    fn the_log_by_a_rare_kind_walks_its_index_and_the_orders_placed_the_log_itself() {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::engine::open_writer(&dir.path().join("plan.db")).unwrap();
        // Every kind but the orders placed is in the partial index, in id order: no sort.
        for kind in ActivityKind::ALL.iter().filter(|k| **k != UNINDEXED_KIND) {
            assert_eq!(
                plan_by(&conn, *kind),
                ["SEARCH activity USING INDEX activity_by_kind (kind=?)"],
                "{kind}"
            );
        }
        // Orders placed are read newest first along the table, nearly every row one of them.
        assert_eq!(plan_by(&conn, UNINDEXED_KIND), ["SCAN activity"]);
    }
}
