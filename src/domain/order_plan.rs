//! What placing, changing, cancelling and deleting an order writes, decided once for both
//! engines: each engine reads the order and its pet's stock row, asks here for the plan, and
//! writes the rows the plan names with its own SQL ([`Placing`], [`OrderPlan`]). Every
//! refusal is decided before anything is written, so a refused change writes nothing on
//! either engine, and the refusals, their codes and their messages are the same on both.
//!
//! The status rules themselves are `status_rules.rs`'s; the stock to write and the status
//! it moves to are a [`StockChange`].

use super::activity::{self, NewActivity};
use super::status_rules::{
    Deletion, NamedPet, PatchKind, StockEvent, deletion, ensure_available, ensure_open, ensure_stock,
    patch_kind,
};
use super::stock_plan::{PetStock, StockChange};
use super::{
    Actor, AuditRecord, NewOrder, Operation, Order, OrderId, OrderPatch, Permission, PetId, PetStatus, Price,
    Timestamp, fold, shipped_at,
};
use crate::error::{Error, ErrorCode, Result};

/// The refusal of an order naming a pet there is none of.
pub fn no_such_pet(pet: PetId) -> Error {
    Error::new(ErrorCode::InvalidReference, format!("petId {pet} names no pet"))
}

/// Whether an order for `quantity` may be placed for `pet`, whose status and stock are as
/// read: only an available pet, and only from stock it has. PostgreSQL's one-statement order
/// asks this of the pet its statement could not take the stock of.
pub fn ensure_orderable(pet: NamedPet<'_>, status: PetStatus, stock: i64, quantity: i64) -> Result<()> {
    ensure_available(pet, status)?;
    ensure_stock(pet, stock, quantity)
}

/// An order to place: the engine inserts the row of `new` with [`NewOrder::ship_date_at`]
/// and [`NewOrder::completed_at`] at [`Placing::at`], costing [`Placing::unit_price`] a
/// unit, then writes [`Placing::stock`] (its quantity taken at once: a reservation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placing {
    pub at: Timestamp,
    pub unit_price: Option<Price>,
    pub stock: StockChange,
}

/// Places `new` for `pet` (the row read for `new.pet_id`, if any) at `now`.
pub fn place(new: &NewOrder, pet: Option<&PetStock>, now: Timestamp) -> Result<Placing> {
    let pet = pet.ok_or_else(|| no_such_pet(new.pet_id))?;
    let quantity = new.quantity.get();
    ensure_orderable(pet.named(), pet.status, pet.stock, quantity)?;
    let stock = StockChange::new(pet, pet.stock - quantity, StockEvent::Taken, now)?;
    Ok(Placing { at: now, unit_price: pet.price, stock })
}

impl Placing {
    /// The order placed, once the engine numbered it `id`: what was written, without
    /// reading it back (every order comes this way).
    pub fn order(&self, new: &NewOrder, id: OrderId) -> Order {
        new.placed(id, self.at, self.unit_price)
    }
}

/// A patch that changes nothing is refused before the order is even looked for.
pub fn refuse_empty(patch: &OrderPatch) -> Result<()> {
    if patch.is_empty() {
        return Err(Error::validation(
            "the patch changes nothing: give quantity, shipDate, complete, customerName, customerPhone or note",
        ));
    }
    Ok(())
}

/// What is asked of an existing order.
#[derive(Debug, Clone, Copy)]
pub enum OrderChange<'p> {
    /// `PATCH /store/orders/{id}`: its fields changed, completed, or reopened.
    Update(&'p OrderPatch),
    /// `POST /store/orders/{id}/cancel`.
    Cancel,
    /// `DELETE /store/orders/{id}`.
    Delete,
}

/// Whether the plan of `change` needs the order's pet's stock row: only when the stock or
/// the status rules are touched, so a refused change or a new ship date reads (and on
/// PostgreSQL locks) no pet.
pub fn reads_pet(order: &Order, change: OrderChange<'_>) -> bool {
    match change {
        OrderChange::Update(patch) => match patch_kind(order, patch) {
            Err(_) => false,
            Ok(PatchKind::Reopen) => true,
            Ok(PatchKind::Change) => {
                patch.quantity.is_some_and(|q| q.get() != order.quantity) || patch.complete == Some(true)
            }
        },
        OrderChange::Cancel => ensure_open(order).is_ok(),
        OrderChange::Delete => matches!(deletion(order), Ok(Deletion::CancelAndRemove)),
    }
}

/// What an engine writes for a change of an existing order, in this order: the order's row
/// (every column a change can set, from [`OrderPlan::order`]) when
/// [`OrderPlan::writes_order`], the audit record, the pet's stock, then the deletion stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPlan {
    /// The order as it is after the change: the answer, and the row's values.
    pub order: Order,
    pub writes_order: bool,
    pub audit: Option<AuditRecord>,
    pub stock: Option<StockChange>,
    /// A deletion: the row stays, stamped, for the shop's records.
    pub deleted_at: Option<Timestamp>,
    /// What the change needs the person making it to be allowed beyond selling: reopening
    /// a completed order takes back completed work ([`Operation::ReopenOrder`]).
    pub needs: Option<Permission>,
    /// The activity log's entry, when [`plan_by`] made the plan and the change writes.
    pub activity: Option<NewActivity>,
}

impl OrderPlan {
    /// The customer's name as the orders' search reads it.
    pub fn customer_name_folded(&self) -> Option<String> {
        self.order.customer_name.as_deref().map(fold)
    }

    fn unchanged(order: Order) -> Self {
        Self {
            order,
            writes_order: false,
            audit: None,
            stock: None,
            deleted_at: None,
            needs: None,
            activity: None,
        }
    }
}

/// The plan of `change` to `order` as read, with its pet's stock row `pet` when
/// [`reads_pet`] asked for it, at `now`.
pub fn plan(
    order: Order,
    change: OrderChange<'_>,
    pet: Option<&PetStock>,
    now: Timestamp,
) -> Result<OrderPlan> {
    match change {
        OrderChange::Update(patch) => update(order, patch, pet, now),
        OrderChange::Cancel => {
            ensure_open(&order)?;
            cancel(order, pet, now)
        }
        OrderChange::Delete => {
            let plan = match deletion(&order)? {
                Deletion::CancelAndRemove => cancel(order, pet, now)?,
                Deletion::Remove => OrderPlan::unchanged(order),
            };
            Ok(OrderPlan { deleted_at: Some(now), ..plan })
        }
    }
}

/// [`plan`] as `actor`'s change: refused with `permission_denied` when the plan
/// [`needs`](OrderPlan::needs) what the actor may not do (before anything is written), the
/// order stamped with who completed or cancelled it (a reopened order was completed by
/// nobody), and the activity log's entry of it. Each engine calls it inside the write's
/// transaction with the handle's actor.
pub fn plan_by(
    order: Order,
    change: OrderChange<'_>,
    pet: Option<&PetStock>,
    now: Timestamp,
    actor: &Actor,
) -> Result<OrderPlan> {
    let before = order.clone();
    let mut plan = plan(order, change, pet, now)?;
    if let Some(permission) = plan.needs {
        actor.check(permission)?;
    }
    let after = &mut plan.order;
    match (before.complete, after.complete) {
        (false, true) => after.completed_by = Some(actor.clone()),
        (true, false) => after.completed_by = None,
        _ => {}
    }
    if before.cancelled_at.is_none() && after.cancelled_at.is_some() {
        after.cancelled_by = Some(actor.clone());
    }
    plan.activity = match change {
        OrderChange::Update(_) => {
            plan.writes_order.then(|| activity::order_updated(&before, &plan.order, actor))
        }
        OrderChange::Cancel => Some(activity::order_cancelled(before.id, actor)),
        OrderChange::Delete => Some(activity::order_deleted(before.id, actor)),
    };
    Ok(plan)
}

/// The pet of an order whose stock the change moves: an order always has one (a pet with
/// orders cannot be deleted).
fn pet_of(pet: Option<&PetStock>) -> Result<&PetStock> {
    pet.ok_or_else(|| Error::internal("order without pet"))
}

/// An open order cancelled: its quantity returns to stock, the order is kept, stamped.
fn cancel(order: Order, pet: Option<&PetStock>, now: Timestamp) -> Result<OrderPlan> {
    let pet = pet_of(pet)?;
    let stock = StockChange::new(pet, pet.stock + order.quantity, StockEvent::Returned, now)?;
    let order = Order { cancelled_at: Some(now), ..order };
    Ok(OrderPlan { stock: Some(stock), writes_order: true, ..OrderPlan::unchanged(order) })
}

fn update(order: Order, patch: &OrderPatch, pet: Option<&PetStock>, now: Timestamp) -> Result<OrderPlan> {
    if patch_kind(&order, patch)? == PatchKind::Reopen {
        // Its units stay reserved: the stock does not move, only the rules run again.
        let pet = pet_of(pet)?;
        let stock = StockChange::new(pet, pet.stock, StockEvent::Reopened, now)?;
        let order = Order { complete: false, completed_at: None, ..order };
        return Ok(OrderPlan {
            stock: Some(stock),
            writes_order: true,
            needs: Some(Operation::ReopenOrder.permission()),
            ..OrderPlan::unchanged(order)
        });
    }

    let mut after = order.clone();
    let (mut audit, mut stock) = (None, None);
    let mut writes_order = false;
    if let Some(quantity) = patch.quantity {
        let more = quantity.get() - order.quantity;
        if more != 0 {
            let pet = pet_of(pet)?;
            ensure_stock(pet.named(), pet.stock, more)?;
            after.quantity = quantity.get();
            after.total = Order::total_of(after.unit_price, after.quantity);
            audit = Some(AuditRecord::order_changed(&order, quantity.get(), -more, pet.stock - more));
            let event = if more > 0 { StockEvent::Taken } else { StockEvent::Returned };
            stock = Some(StockChange::new(pet, pet.stock - more, event, now)?);
            writes_order = true;
        }
    }
    if let Some(ship_date) = patch.ship_date {
        after.ship_date = ship_date;
        writes_order = true;
    }
    if let Some(name) = &patch.customer_name {
        after.customer_name = name.as_ref().map(|n| n.as_str().to_owned());
        writes_order = true;
    }
    if let Some(phone) = &patch.customer_phone {
        after.customer_phone = phone.as_ref().map(|p| p.as_str().to_owned());
        writes_order = true;
    }
    if let Some(note) = &patch.note {
        after.note = note.as_ref().map(|n| n.as_str().to_owned());
        writes_order = true;
    }
    if patch.complete == Some(true) {
        let at = patch.completed_at.unwrap_or(now);
        after.complete = true;
        after.completed_at = Some(at);
        // Ships when completed unless a date was planned.
        after.ship_date = Some(shipped_at(after.ship_date, at));
        stock = Some(match stock {
            Some(moved) => moved.then_completed(),
            None => {
                let pet = pet_of(pet)?;
                StockChange::new(pet, pet.stock, StockEvent::Completed, now)?
            }
        });
        writes_order = true;
    }
    Ok(OrderPlan { order: after, writes_order, audit, stock, deleted_at: None, needs: None, activity: None })
}

#[cfg(test)]
mod tests {
    use super::super::stock_plan::tests::{at, nemo};
    use super::*;
    use crate::domain::Description;
    use PetStatus::*;

    fn new_order(quantity: i64, complete: bool) -> NewOrder {
        serde_json::from_value(serde_json::json!({ "petId": 6, "quantity": quantity, "complete": complete }))
            .unwrap()
    }

    fn open_order(quantity: i64) -> Order {
        let later = Timestamp::parse("2026-11-27T09:00:00Z").unwrap();
        let mut order = new_order(quantity, false).placed(OrderId::try_from(12).unwrap(), later, None);
        order.unit_price = Some(Price::try_from("2.50".to_owned()).unwrap());
        order.total = Order::total_of(order.unit_price, quantity);
        order
    }

    fn patch(json: serde_json::Value) -> OrderPatch {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn placing_takes_the_quantity_at_the_pets_price_or_refuses_before_any_write() {
        let mut pet = nemo(Available, 3);
        pet.price = Some(Price::try_from("4.00".to_owned()).unwrap());
        let placing = place(&new_order(2, false), Some(&pet), at()).unwrap();
        assert_eq!((placing.stock.stock, placing.unit_price, placing.at), (1, pet.price, at()));
        let order = placing.order(&new_order(2, false), OrderId::try_from(9).unwrap());
        assert_eq!(
            (order.quantity, order.created_at, order.total.unwrap().to_string()),
            (2, at(), "8.00".into())
        );

        let refused =
            |pet: Option<&PetStock>, quantity| place(&new_order(quantity, false), pet, at()).unwrap_err();
        let none = refused(None, 1);
        assert_eq!((none.code, none.message.as_str()), (ErrorCode::InvalidReference, "petId 6 names no pet"));
        assert_eq!(refused(Some(&nemo(Sold, 3)), 1).code, ErrorCode::PetNotAvailable);
        assert_eq!(refused(Some(&pet), 4).message, "Nemo (#6) has 3 in stock; 4 more were asked for");
    }

    #[test]
    fn a_counter_sale_of_the_last_unit_sells_the_pet_once_no_other_order_is_open() {
        let placing = place(&new_order(3, true), Some(&nemo(Available, 3)), at()).unwrap();
        assert!(placing.stock.counts_open_orders());
        assert_eq!(placing.stock.status_after(0), Some(Sold));
        assert_eq!(placing.stock.status_after(1), Some(Pending));
    }

    #[test]
    fn an_empty_patch_is_refused_with_what_to_give() {
        let refused = refuse_empty(&OrderPatch::default()).unwrap_err();
        assert_eq!(refused.code, ErrorCode::ValidationFailed);
        assert!(refused.message.starts_with("the patch changes nothing"));
        assert!(refuse_empty(&patch(serde_json::json!({ "note": null }))).is_ok());
    }

    #[test]
    fn a_larger_quantity_takes_the_difference_records_it_and_keeps_the_total_right() {
        let order = open_order(2);
        let change = patch(serde_json::json!({ "quantity": 5 }));
        assert!(reads_pet(&order, OrderChange::Update(&change)));
        let plan =
            plan(order.clone(), OrderChange::Update(&change), Some(&nemo(Available, 3)), at()).unwrap();
        assert!(plan.writes_order);
        assert_eq!((plan.order.quantity, plan.order.total.unwrap().to_string()), (5, "12.50".into()));
        assert_eq!(plan.audit, Some(AuditRecord::order_changed(&order, 5, -3, 0)));
        let stock = plan.stock.unwrap();
        assert_eq!(stock.stock, 0);
        assert_eq!(stock.status_after(1), Some(Pending), "the order itself is open");

        let refused =
            super::plan(order, OrderChange::Update(&change), Some(&nemo(Available, 2)), at()).unwrap_err();
        assert_eq!(refused.message, "Nemo (#6) has 2 in stock; 3 more were asked for");
    }

    #[test]
    fn the_same_quantity_writes_nothing_and_field_changes_read_no_pet() {
        let order = open_order(2);
        let same = patch(serde_json::json!({ "quantity": 2 }));
        assert!(!reads_pet(&order, OrderChange::Update(&same)));
        let plan = plan(order.clone(), OrderChange::Update(&same), None, at()).unwrap();
        assert_eq!((plan.writes_order, plan.stock, plan.order), (false, None, order.clone()));

        let fields = patch(serde_json::json!({
            "shipDate": "2026-12-01T00:00:00Z", "customerName": "Ana Álvarez", "note": "gift"
        }));
        assert!(!reads_pet(&order, OrderChange::Update(&fields)));
        let plan = super::plan(order, OrderChange::Update(&fields), None, at()).unwrap();
        assert!(plan.writes_order && plan.stock.is_none() && plan.audit.is_none());
        assert_eq!(plan.order.customer_name.as_deref(), Some("Ana Álvarez"));
        assert_eq!(plan.customer_name_folded().as_deref(), Some("ana alvarez"));
        assert_eq!(
            plan.order.note,
            Some(Description::try_from("gift".to_owned()).unwrap().as_str().to_owned())
        );
        let cleared = patch(serde_json::json!({ "customerName": null }));
        let plan = super::plan(plan.order, OrderChange::Update(&cleared), None, at()).unwrap();
        assert_eq!((plan.customer_name_folded(), plan.order.customer_name), (None, None));
    }

    #[test]
    fn completing_ships_at_the_completion_unless_planned_and_runs_the_rules_after_the_quantity() {
        let order = open_order(1);
        let done = patch(serde_json::json!({ "complete": true }));
        let plan = plan(order.clone(), OrderChange::Update(&done), Some(&nemo(Pending, 0)), at()).unwrap();
        assert_eq!((plan.order.completed_at, plan.order.ship_date), (Some(at()), Some(at())));
        assert_eq!(plan.stock.as_ref().unwrap().status_after(0), Some(Sold));

        let earlier = Timestamp::parse("2026-11-27T08:00:00Z").unwrap();
        let planned = Timestamp::parse("2026-12-24T12:00:00Z").unwrap();
        let offline = patch(serde_json::json!({
            "complete": true, "completedAt": "2026-11-27T08:00:00Z", "shipDate": "2026-12-24T12:00:00Z",
            "quantity": 2
        }));
        let plan =
            super::plan(order, OrderChange::Update(&offline), Some(&nemo(Available, 1)), at()).unwrap();
        assert_eq!((plan.order.completed_at, plan.order.ship_date), (Some(earlier), Some(planned)));
        let stock = plan.stock.unwrap();
        assert_eq!(stock.stock, 0);
        // Taken while open (pending), then completed with no other order open: sold.
        assert_eq!(stock.status_after(0), Some(Sold));
        assert!(plan.audit.is_some());
    }

    #[test]
    fn reopening_keeps_the_stock_and_runs_the_rules_again() {
        let completed = Order { complete: true, completed_at: Some(at()), ..open_order(1) };
        let reopen = patch(serde_json::json!({ "complete": false }));
        assert!(reads_pet(&completed, OrderChange::Update(&reopen)));
        let plan = plan(completed, OrderChange::Update(&reopen), Some(&nemo(Sold, 0)), at()).unwrap();
        assert_eq!((plan.order.complete, plan.order.completed_at), (false, None));
        let stock = plan.stock.unwrap();
        assert_eq!(stock.stock, 0);
        assert_eq!(stock.status_after(1), Some(Pending));
    }

    #[test]
    fn cancelling_returns_the_quantity_and_refuses_what_is_not_open() {
        let order = open_order(2);
        let plan = plan(order.clone(), OrderChange::Cancel, Some(&nemo(Sold, 0)), at()).unwrap();
        assert_eq!(plan.order.cancelled_at, Some(at()));
        assert_eq!(plan.stock.as_ref().map(|s| (s.stock, s.status_after(0))), Some((2, Some(Available))));
        assert_eq!(plan.deleted_at, None);

        let cancelled = plan.order;
        assert!(!reads_pet(&cancelled, OrderChange::Cancel));
        let again = super::plan(cancelled, OrderChange::Cancel, None, at()).unwrap_err();
        assert_eq!(
            (again.code, again.message.as_str()),
            (ErrorCode::OrderCancelled, "order 12 is already cancelled")
        );
        let full = nemo(Available, crate::domain::StockLevel::MAX);
        assert_eq!(
            super::plan(order, OrderChange::Cancel, Some(&full), at()).unwrap_err().code,
            ErrorCode::ValidationFailed
        );
    }

    #[test]
    fn deleting_cancels_an_open_order_first_only_removes_a_cancelled_one_and_keeps_a_sale() {
        let order = open_order(2);
        assert!(reads_pet(&order, OrderChange::Delete));
        let plan = plan(order.clone(), OrderChange::Delete, Some(&nemo(Available, 1)), at()).unwrap();
        assert!(plan.writes_order && plan.stock.is_some());
        assert_eq!((plan.order.cancelled_at, plan.deleted_at), (Some(at()), Some(at())));

        let cancelled = plan.order;
        assert!(!reads_pet(&cancelled, OrderChange::Delete));
        let plan = super::plan(cancelled.clone(), OrderChange::Delete, None, at()).unwrap();
        assert_eq!((plan.writes_order, plan.stock, plan.deleted_at), (false, None, Some(at())));

        let sale = Order { complete: true, completed_at: Some(at()), ..order };
        assert!(!reads_pet(&sale, OrderChange::Delete));
        assert_eq!(
            super::plan(sale, OrderChange::Delete, None, at()).unwrap_err().code,
            ErrorCode::OrderCompleted
        );
    }

    fn person(role: crate::domain::Role) -> Actor {
        let name =
            crate::domain::Name::parse(if role == crate::domain::Role::Cashier { "Ana" } else { "Bea" })
                .unwrap();
        let staff = crate::domain::StaffRef { id: crate::domain::StaffId::try_from(2).unwrap(), name, role };
        Actor { staff: Some(staff), ..Actor::default() }
    }

    #[test]
    fn reopening_needs_reopen_orders_and_plan_by_refuses_a_cashier_before_anything_is_written() {
        use crate::domain::{ActivityKind, Role};
        let (cashier, manager) = (person(Role::Cashier), person(Role::Manager));
        let completed = Order {
            complete: true,
            completed_at: Some(at()),
            completed_by: Some(cashier.clone()),
            ..open_order(1)
        };
        let reopen = patch(serde_json::json!({ "complete": false }));
        let planned =
            plan(completed.clone(), OrderChange::Update(&reopen), Some(&nemo(Sold, 0)), at()).unwrap();
        assert_eq!(planned.needs, Some(Permission::ReopenOrders));
        let refused =
            plan_by(completed.clone(), OrderChange::Update(&reopen), Some(&nemo(Sold, 0)), at(), &cashier)
                .unwrap_err();
        assert_eq!(refused.code, ErrorCode::PermissionDenied);
        let reopened =
            plan_by(completed, OrderChange::Update(&reopen), Some(&nemo(Sold, 0)), at(), &manager).unwrap();
        assert_eq!(reopened.order.completed_by, None, "completed by nobody now");
        assert_eq!(
            reopened.activity.map(|a| (a.kind, a.actor)),
            Some((ActivityKind::OrderReopened, manager))
        );
    }

    #[test]
    fn plan_by_stamps_who_completed_or_cancelled_and_logs_only_what_it_writes() {
        use crate::domain::{ActivityKind, Role};
        let cashier = person(Role::Cashier);
        let done = patch(serde_json::json!({ "complete": true, "quantity": 2 }));
        let plan =
            plan_by(open_order(1), OrderChange::Update(&done), Some(&nemo(Available, 3)), at(), &cashier)
                .unwrap();
        assert_eq!(
            (plan.needs, plan.order.completed_by.as_ref()),
            (None, Some(&cashier)),
            "selling is a cashier's"
        );
        let entry = plan.activity.unwrap();
        assert_eq!(
            (entry.kind, entry.detail.as_deref()),
            (ActivityKind::OrderCompleted, Some("quantity 1 → 2"))
        );

        let plan =
            plan_by(open_order(1), OrderChange::Cancel, Some(&nemo(Pending, 0)), at(), &cashier).unwrap();
        assert_eq!(plan.order.cancelled_by.as_ref(), Some(&cashier));
        assert_eq!(plan.activity.map(|a| a.kind), Some(ActivityKind::OrderCancelled));

        let deleted =
            plan_by(open_order(1), OrderChange::Delete, Some(&nemo(Pending, 0)), at(), &cashier).unwrap();
        assert_eq!(deleted.order.cancelled_by.as_ref(), Some(&cashier), "cancelled first");
        assert_eq!(deleted.activity.map(|a| a.kind), Some(ActivityKind::OrderDeleted));

        let same = patch(serde_json::json!({ "quantity": 2 }));
        let plan = plan_by(open_order(2), OrderChange::Update(&same), None, at(), &cashier).unwrap();
        assert_eq!((plan.writes_order, plan.activity), (false, None), "nothing written, nothing logged");
    }
}
