//! Orders and stock: every pet status rule, on both backends.

use petstore::domain::*;
use petstore::{ErrorCode, Petstore};

use super::support::*;
use ErrorCode::*;
use PetStatus::*;

pub(super) async fn orders_take_stock_and_completing_the_last_sells_the_pet(
    p: &dyn Petstore,
    t: &mut Transcript,
) {
    let rex = pet_with_stock(p, t, "Rex", 3).await.id;
    let first = t.ok("order 2", p.place_order(order(rex, 2)).await);
    assert_eq!(
        (first.id, first.pet_id, first.quantity, first.complete, first.ship_date),
        (oid(1), rex, 2, false, None)
    );
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    t.fails("order 2 more", p.place_order(order(rex, 2)).await, InsufficientStock);

    let second = t.ok("order the last", p.place_order(order(rex, 1)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
    t.fails("order a pending pet", p.place_order(order(rex, 1)).await, PetNotAvailable);

    let done = t.ok("complete the first", p.update_order(first.id, complete()).await);
    // Completing stamps when; with no ship date planned, it shipped then (the spec's "expected or actual ship date").
    assert!(done.complete && done.completed_at.is_some() && done.ship_date == done.completed_at, "{done:?}");
    assert_eq!(stock_of(p, t, rex).await, (0, Pending), "one order is still open");
    let shipped = OrderPatch { ship_date: Some(Some(time("2026-12-01T09:00:00Z"))), ..complete() };
    let done = t.ok("complete the second", p.update_order(second.id, shipped).await);
    assert_eq!(done.ship_date, Some(time("2026-12-01T09:00:00Z")));
    assert_eq!(stock_of(p, t, rex).await, (0, Sold));
    assert_eq!(t.ok("get Rex", p.get_pet(rex).await).status, Sold);
    t.fails("order a sold pet", p.place_order(order(rex, 1)).await, PetNotAvailable);

    let of_rex = OrderFilter { pet_id: Some(rex), ..Default::default() };
    let listed = t.ok("orders of Rex", p.list_orders(of_rex.clone(), all()).await);
    let ids: Vec<OrderId> = listed.items.iter().map(|o| o.id).collect();
    assert_eq!((ids, listed.total), (vec![second.id, first.id], 2), "newest first");
    assert_eq!(t.ok("get the first", p.get_order(first.id).await), listed.items[1]);
    let open = OrderFilter { complete: Some(false), ..of_rex.clone() };
    assert_eq!(t.ok("open orders", p.list_orders(open, all()).await).total, 0);
    let closed = OrderFilter { complete: Some(true), ..of_rex };
    assert_eq!(t.ok("completed orders", p.list_orders(closed, page(1, 1)).await).items[0].id, first.id);
}

pub(super) async fn cancelling_or_shrinking_an_order_returns_stock(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 1).await.id;
    let first = t.ok("order the last", p.place_order(order(rex, 1)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
    t.ok("cancel it", p.cancel_order(first.id).await);
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    let kept = t.ok("get the cancelled order", p.get_order(first.id).await);
    assert!(kept.cancelled_at.is_some() && !kept.complete, "kept, stamped when: {kept:?}");
    t.fails("cancel it again", p.cancel_order(first.id).await, OrderCancelled);

    let second = t.ok("order again", p.place_order(order(rex, 1)).await);
    assert_eq!(second.id, oid(2), "ids are never reused");
    let more = OrderPatch { quantity: Some(Quantity::try_from(3).unwrap()), ..Default::default() };
    t.fails("raise beyond stock", p.update_order(second.id, more.clone()).await, InsufficientStock);
    t.ok("count 3 more", p.set_inventory(rex, count(3)).await);
    assert_eq!(stock_of(p, t, rex).await, (3, Available));
    assert_eq!(t.ok("raise to 3", p.update_order(second.id, more).await).quantity, 3);
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    let fewer = OrderPatch { quantity: Some(Quantity::try_from(1).unwrap()), ..Default::default() };
    assert_eq!(t.ok("lower to 1", p.update_order(second.id, fewer).await).quantity, 1);
    assert_eq!(stock_of(p, t, rex).await, (3, Available));

    let date = OrderPatch { ship_date: Some(Some(time("2026-12-24T08:00:00Z"))), ..Default::default() };
    let dated = t.ok("set a ship date", p.update_order(second.id, date).await);
    assert_eq!((dated.ship_date, dated.complete), (Some(time("2026-12-24T08:00:00Z")), false));
}

pub(super) async fn a_counter_sale_sells_the_last_one(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 2).await.id;
    let first = t.ok("sell one", p.place_order(sale(rex, 1)).await);
    assert!(
        first.complete && first.completed_at.is_some() && first.ship_date == first.completed_at,
        "{first:?}"
    );
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    let dated = NewOrder { ship_date: Some(time("2026-11-30T16:45:00Z")), ..sale(rex, 1) };
    let last = t.ok("sell the last", p.place_order(dated).await);
    assert_eq!((last.complete, last.ship_date), (true, Some(time("2026-11-30T16:45:00Z"))));
    assert_eq!(stock_of(p, t, rex).await, (0, Sold));
}

pub(super) async fn stock_counts_move_the_status_and_are_audited(p: &dyn Petstore, t: &mut Transcript) {
    let rex = t.ok("create Rex", p.create_pet(pet("Rex")).await).id;
    assert_eq!(stock_of(p, t, rex).await, (0, Available), "a new pet has no stock");
    t.ok("count 0", p.set_inventory(rex, count(0)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Sold), "0 with no open orders is sold");

    assert_eq!(t.ok("count 5", p.set_inventory(rex, count(5)).await).status, Available);
    t.ok("count 5 again", p.set_inventory(rex, count(5)).await);
    let item = t.ok("delivery", p.adjust_inventory(rex, adjustment(3, "Delivery from the breeder")).await);
    assert_eq!((item.pet_id, item.pet_name.as_str(), item.quantity), (rex, "Rex", 8));
    assert_eq!(t.ok("loss", p.adjust_inventory(rex, adjustment(-2, "Returned")).await).quantity, 6);
    t.fails("remove too many", p.adjust_inventory(rex, adjustment(-7, "Lost")).await, InsufficientStock);
    t.fails(
        "beyond the maximum",
        p.adjust_inventory(rex, adjustment(1_000_000, "Flood")).await,
        ValidationFailed,
    );

    let reserved = t.ok("order all 6", p.place_order(order(rex, 6)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
    assert_eq!(t.ok("two more", p.adjust_inventory(rex, adjustment(2, "Found two")).await).status, Available);
    assert_eq!(t.ok("count 0 with an open order", p.set_inventory(rex, count(0)).await).status, Pending);
    t.ok("cancel the order", p.cancel_order(reserved.id).await);
    assert_eq!(stock_of(p, t, rex).await, (6, Available));
    assert_eq!(t.ok("count 0 without orders", p.set_inventory(rex, count(0)).await).status, Sold);

    let trail = t.ok("the trail", p.list_adjustments(rex, all()).await);
    let rows: Vec<(i64, &str, i64)> =
        trail.items.iter().map(|a| (a.delta, a.reason.as_str(), a.quantity_after)).collect();
    let expected = [
        (-6, "stock set to 0", 0),
        (-2, "stock set to 0", 0),
        (2, "Found two", 2),
        (-2, "Returned", 6),
        (3, "Delivery from the breeder", 8),
        (5, "stock set to 5", 5),
    ];
    assert_eq!(
        (rows, trail.total),
        (expected.to_vec(), 6),
        "newest first; no entry for a count that changed nothing"
    );
    assert!(trail.items.iter().all(|a| a.pet_id == rex));
    let ids: Vec<i64> = trail.items.iter().map(|a| a.id.get()).collect();
    assert_eq!(ids, [6, 5, 4, 3, 2, 1]);
    let second_page = t.ok("the trail, page 2", p.list_adjustments(rex, page(4, 4)).await);
    assert_eq!((second_page.items.len(), second_page.total), (2, 6));
}

pub(super) async fn completed_orders_are_final(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 2).await.id;
    let done = t.ok("order", p.place_order(order(rex, 1)).await);
    t.ok("complete it", p.update_order(done.id, complete()).await);
    let more = OrderPatch { quantity: Some(Quantity::try_from(2).unwrap()), ..Default::default() };
    t.fails("change a completed order", p.update_order(done.id, more).await, OrderCompleted);
    t.fails("complete it again", p.update_order(done.id, complete()).await, OrderCompleted);
    t.fails("cancel a completed order", p.cancel_order(done.id).await, OrderCompleted);
    t.fails("empty patch", p.update_order(done.id, OrderPatch::default()).await, ValidationFailed);
    let open = t.ok("another order", p.place_order(order(rex, 1)).await);
    t.fails(
        "empty patch on an open order",
        p.update_order(open.id, OrderPatch::default()).await,
        ValidationFailed,
    );
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
}

pub(super) async fn cancelled_orders_are_kept_apart_and_completing_can_be_undone(
    p: &dyn Petstore,
    t: &mut Transcript,
) {
    let rex = pet_with_stock(p, t, "Rex", 3).await.id;
    let kept = t.ok("order", p.place_order(order(rex, 2)).await);
    let open = t.ok("another order", p.place_order(order(rex, 1)).await);
    t.ok("cancel the first", p.cancel_order(kept.id).await);
    assert_eq!(stock_of(p, t, rex).await, (2, Available));
    let listed = t.ok("the orders", p.list_orders(OrderFilter::default(), all()).await);
    assert_eq!((listed.items.iter().map(|o| o.id).collect::<Vec<_>>(), listed.total), (vec![open.id], 1));
    let only_cancelled = OrderFilter { cancelled: true, ..OrderFilter::default() };
    let cancelled = t.ok("the cancelled orders", p.list_orders(only_cancelled.clone(), all()).await);
    assert_eq!((cancelled.items[0].id, cancelled.total), (kept.id, 1));
    assert!(cancelled.items[0].cancelled_at.is_some());
    let searched = OrderFilter { q: Some(name("rex")), ..only_cancelled };
    assert_eq!(t.ok("search the cancelled", p.list_orders(searched, all()).await).total, 1);
    let fewer = OrderPatch { quantity: Some(Quantity::try_from(1).unwrap()), ..Default::default() };
    t.fails("change a cancelled order", p.update_order(kept.id, fewer).await, OrderCancelled);
    t.fails("complete a cancelled order", p.update_order(kept.id, complete()).await, OrderCancelled);

    // The undo of completing: the order is open again and keeps its units.
    let done = t.ok("complete the other", p.update_order(open.id, complete()).await);
    assert!(done.complete && done.completed_at.is_some());
    let reopen = OrderPatch { complete: Some(false), ..Default::default() };
    let reopened = t.ok("reopen it", p.update_order(open.id, reopen.clone()).await);
    assert_eq!((reopened.complete, reopened.completed_at, reopened.quantity), (false, None, 1));
    assert_eq!(stock_of(p, t, rex).await, (2, Available), "its unit stays reserved");
    t.ok("reopen an open order: nothing to undo", p.update_order(open.id, reopen.clone()).await);
    t.ok("cancel the reopened order", p.cancel_order(open.id).await);
    assert_eq!(stock_of(p, t, rex).await, (3, Available));
    t.fails("reopen a cancelled order", p.update_order(open.id, reopen).await, OrderCancelled);
}

pub(super) async fn inventory_is_listed_lowest_first_with_filters(p: &dyn Petstore, t: &mut Transcript) {
    for (text, stock) in [("Rex", 5), ("Bella", 0), ("Max", 2), ("Luna", 10)] {
        pet_with_stock(p, t, text, stock).await;
    }
    let rows = |items: &Paged<InventoryItem>| -> Vec<(String, i64)> {
        items.items.iter().map(|i| (i.pet_name.clone(), i.quantity)).collect()
    };
    let s =
        |v: &[(&str, i64)]| -> Vec<(String, i64)> { v.iter().map(|(n, q)| (n.to_string(), *q)).collect() };

    let listed = t.ok("all", p.list_inventory(InventoryFilter::default(), all()).await);
    assert_eq!(rows(&listed), s(&[("Bella", 0), ("Max", 2), ("Rex", 5), ("Luna", 10)]));
    assert_eq!(listed.total, 4);
    assert_eq!(listed.items[0].status, Sold, "counting 0 on an available pet without orders sells it");

    let low = InventoryFilter { below_quantity: Some(3), ..Default::default() };
    let listed = t.ok("below 3", p.list_inventory(low, all()).await);
    assert_eq!((rows(&listed), listed.total), (s(&[("Bella", 0), ("Max", 2)]), 2));
    let sold = InventoryFilter { statuses: vec![Sold], ..Default::default() };
    assert_eq!(rows(&t.ok("sold", p.list_inventory(sold, all()).await)), s(&[("Bella", 0)]));
    let filter = InventoryFilter { statuses: vec![Available, Pending], below_quantity: Some(6) };
    assert_eq!(
        rows(&t.ok("available below 6", p.list_inventory(filter, all()).await)),
        s(&[("Max", 2), ("Rex", 5)])
    );
    let paged = t.ok("page 2", p.list_inventory(InventoryFilter::default(), page(1, 1)).await);
    assert_eq!((rows(&paged), paged.total), (s(&[("Max", 2)]), 4));

    let rex = t.ok("Rex's stock", p.get_inventory(pid(1)).await);
    assert_eq!((rex.pet_id, rex.pet_name.as_str(), rex.status, rex.quantity), (pid(1), "Rex", Available, 5));
}
