//! Staff on PostgreSQL: the schema's owner, the rows of `engine::Staff` (lockouts, the last
//! owner, sessions and approvals, also with two requests at once) and the actor every
//! write records, on its record and in the activity log.

use super::*;

/// Schema 12 upgrades a shop with data: its one owner is staff member 1, without a PIN,
/// the next member made is 2 (the identity's sequence moved past the row the migration
/// wrote), and what was made before staff names no one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_12_gives_an_upgraded_shop_its_owner_and_leaves_old_records_unnamed() {
    let Some(target) = database().await else { return };
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute("CREATE TABLE schema_migrations (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        .await
        .unwrap();
    for (version, sql) in (1_i64..).zip(super::super::migrations::up_to(11)) {
        client.batch_execute(sql).await.unwrap();
        client.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[&version]).await.unwrap();
    }
    client
        .batch_execute(
            "INSERT INTO pets (id, name, name_folded, status, stock, stock_updated_at, created_at, updated_at)
                 VALUES (1, 'Rex', 'rex', 'available', 5, '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z');
             INSERT INTO orders (id, pet_id, quantity, complete, created_at) VALUES (1, 1, 1, false, '2026-11-02T09:00:00Z');
             INSERT INTO inventory_adjustments (pet_id, delta, reason, quantity_after, created_at)
                 VALUES (1, 5, 'delivery', 5, '2026-11-01T09:00:00Z');",
        )
        .await
        .unwrap();

    PgStore::connect(&target).await.unwrap();
    let owner = client.query_one("SELECT id, name, role, pin_hash, active FROM staff", &[]).await.unwrap();
    let owner: (i64, String, String, Option<String>, bool) =
        (owner.get(0), owner.get(1), owner.get(2), owner.get(3), owner.get(4));
    assert_eq!(owner, (1, "Owner".to_owned(), "owner".to_owned(), None, true));
    let next: i64 = client
        .query_one(
            "INSERT INTO staff (name, role, created_at, updated_at) VALUES ('Ana', 'cashier', '', '') RETURNING id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(next, 2, "the next member after the owner");
    let unnamed: (Option<String>, Option<String>, Option<String>, Option<String>) = {
        let r = client
            .query_one(
                "SELECT o.placed_by, o.completed_by, o.cancelled_by, a.made_by
                 FROM orders o, inventory_adjustments a",
                &[],
            )
            .await
            .unwrap();
        (r.get(0), r.get(1), r.get(2), r.get(3))
    };
    assert_eq!(unnamed, (None, None, None, None), "made before staff");
}
