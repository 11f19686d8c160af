//! A property test: random sequences of stock and order operations run against the real
//! store and against a small, independent model of the pet status and stock rules (an order
//! takes its stock at once; the last unit taken leaves the pet `pending` while orders are
//! open, `sold` once none are; returned or counted stock makes it `available`). After every
//! step both must agree on the outcome (success or error code) and on every pet's status
//! and stock; and stock plus ordered quantities only ever changes through stock counts.

use petstore::domain::*;
use petstore::{ErrorCode, Petstore};
use proptest::prelude::*;

// Two pets, small stock and few order slots: sequences then often sell a pet out, so the
// rare transitions (last open order completed on an empty stock) are reached.
const PETS: usize = 2;

#[derive(Debug, Clone)]
enum Op {
    SetStock(usize, i64),
    Adjust(usize, i64),
    Place(usize, i64, bool),
    Complete(usize),
    Cancel(usize),
    ChangeQuantity(usize, i64),
    SetStatus(usize, PetStatus),
}

fn op() -> impl Strategy<Value = Op> {
    let pet = 0..PETS;
    let order = 0..4usize;
    let status = prop_oneof![Just(PetStatus::Available), Just(PetStatus::Pending), Just(PetStatus::Sold)];
    prop_oneof![
        2 => (pet.clone(), 0..4i64).prop_map(|(p, n)| Op::SetStock(p, n)),
        1 => (pet.clone(), -3..4i64).prop_filter("non-zero", |(_, d)| *d != 0).prop_map(|(p, d)| Op::Adjust(p, d)),
        4 => (pet.clone(), 1..3i64, proptest::bool::weighted(0.2)).prop_map(|(p, q, c)| Op::Place(p, q, c)),
        2 => order.clone().prop_map(Op::Complete),
        1 => order.clone().prop_map(Op::Cancel),
        1 => (order, 1..4i64).prop_map(|(o, q)| Op::ChangeQuantity(o, q)),
        1 => (pet, status).prop_map(|(p, s)| Op::SetStatus(p, s)),
    ]
}

#[derive(Debug, Clone, Copy)]
struct ModelPet {
    status: PetStatus,
    stock: i64,
    /// Everything staff ever counted in: stock plus ordered quantities must equal it.
    stocked: i64,
}

#[derive(Debug, Clone, Copy)]
struct ModelOrder {
    pet: usize,
    quantity: i64,
    complete: bool,
    /// Cancelled orders are kept, and refuse every change.
    cancelled: bool,
}

#[derive(Default)]
struct Model {
    pets: Vec<ModelPet>,
    /// Orders in placement order.
    orders: Vec<Option<ModelOrder>>,
}

impl Model {
    fn open_orders(&self, pet: usize) -> usize {
        self.orders.iter().flatten().filter(|o| o.pet == pet && !o.complete && !o.cancelled).count()
    }

    fn counted(&mut self, pet: usize, stock: i64) {
        let open = self.open_orders(pet);
        let p = &mut self.pets[pet];
        p.stocked += stock - p.stock;
        p.stock = stock;
        if stock > 0 {
            p.status = PetStatus::Available;
        } else if p.status == PetStatus::Available {
            p.status = if open > 0 { PetStatus::Pending } else { PetStatus::Sold };
        }
    }

    fn took(&mut self, pet: usize) {
        let open = self.open_orders(pet);
        let p = &mut self.pets[pet];
        if p.stock == 0 {
            p.status = if open > 0 { PetStatus::Pending } else { PetStatus::Sold };
        }
    }

    fn returned(&mut self, pet: usize) {
        let p = &mut self.pets[pet];
        if p.stock > 0 {
            p.status = PetStatus::Available;
        }
    }

    fn order(&self, index: usize) -> Result<ModelOrder, ErrorCode> {
        match self.orders.get(index).copied().flatten() {
            None => Err(ErrorCode::NotFound),
            Some(o) if o.cancelled => Err(ErrorCode::OrderCancelled),
            Some(o) if o.complete => Err(ErrorCode::OrderCompleted),
            Some(o) => Ok(o),
        }
    }

    fn apply(&mut self, op: &Op) -> Result<(), ErrorCode> {
        match *op {
            Op::SetStock(pet, n) => self.counted(pet, n),
            Op::Adjust(pet, d) => {
                let after = self.pets[pet].stock + d;
                if after < 0 {
                    return Err(ErrorCode::InsufficientStock);
                }
                self.counted(pet, after);
            }
            Op::Place(pet, quantity, complete) => {
                if self.pets[pet].status != PetStatus::Available {
                    return Err(ErrorCode::PetNotAvailable);
                }
                if self.pets[pet].stock < quantity {
                    return Err(ErrorCode::InsufficientStock);
                }
                self.pets[pet].stock -= quantity;
                self.orders.push(Some(ModelOrder { pet, quantity, complete, cancelled: false }));
                self.took(pet);
            }
            Op::Complete(index) => {
                let o = self.order(index)?;
                self.orders[index] = Some(ModelOrder { complete: true, ..o });
                if self.pets[o.pet].stock == 0 && self.open_orders(o.pet) == 0 {
                    self.pets[o.pet].status = PetStatus::Sold;
                }
            }
            Op::Cancel(index) => {
                let o = self.order(index)?;
                self.orders[index] = Some(ModelOrder { cancelled: true, ..o });
                self.pets[o.pet].stock += o.quantity;
                self.returned(o.pet);
            }
            Op::ChangeQuantity(index, quantity) => {
                let o = self.order(index)?;
                let more = quantity - o.quantity;
                if more > self.pets[o.pet].stock {
                    return Err(ErrorCode::InsufficientStock);
                }
                if more != 0 {
                    self.orders[index] = Some(ModelOrder { quantity, ..o });
                    self.pets[o.pet].stock -= more;
                    if more > 0 { self.took(o.pet) } else { self.returned(o.pet) }
                }
            }
            Op::SetStatus(pet, status) => self.pets[pet].status = status,
        }
        Ok(())
    }
}

/// Runs `op` on the store; `orders` maps model order indexes to store ids.
async fn run(
    store: &dyn Petstore,
    pets: &[PetId],
    orders: &mut Vec<Option<OrderId>>,
    op: &Op,
) -> Result<(), ErrorCode> {
    let order = |i: usize| orders.get(i).copied().flatten().unwrap_or(OrderId::try_from(i64::MAX).unwrap());
    let outcome = match *op {
        Op::SetStock(p, n) => store
            .set_inventory(
                pets[p],
                InventoryUpdate { quantity: StockLevel::try_from(n).unwrap(), reason: None },
            )
            .await
            .map(drop),
        Op::Adjust(p, d) => store
            .adjust_inventory(
                pets[p],
                NewInventoryAdjustment {
                    delta: Delta::try_from(d).unwrap(),
                    reason: Reason::parse("model").unwrap(),
                },
            )
            .await
            .map(drop),
        Op::Place(p, q, complete) => {
            let new = NewOrder {
                customer_name: None,
                customer_phone: None,
                note: None,
                placed_at: None,
                pet_id: pets[p],
                quantity: Quantity::try_from(q).unwrap(),
                ship_date: None,
                complete,
            };
            store.place_order(new).await.map(|o| orders.push(Some(o.id)))
        }
        Op::Complete(i) => store
            .update_order(order(i), OrderPatch { complete: Some(true), ..Default::default() })
            .await
            .map(drop),
        Op::Cancel(i) => store.cancel_order(order(i)).await.map(drop),
        Op::ChangeQuantity(i, q) => store
            .update_order(
                order(i),
                OrderPatch { quantity: Some(Quantity::try_from(q).unwrap()), ..Default::default() },
            )
            .await
            .map(drop),
        Op::SetStatus(p, status) => {
            store.update_pet(pets[p], PetPatch { status: Some(status), ..Default::default() }).await.map(drop)
        }
    };
    outcome.map_err(|e| e.code)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_store_follows_the_model(ops in proptest::collection::vec(op(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            // A fresh database per case, on the engine under test.
            let db = crate::support::TestDb::new();
            let store = db.open().await;
            let mut pets = Vec::new();
            let mut model = Model::default();
            for i in 0..PETS {
                let pet = store
                    .create_pet(NewPet { price: None, sku: None, name: Name::parse(&format!("pet {i}")).unwrap(), category_id: None, status: PetStatus::Available, description: None })
                    .await
                    .unwrap();
                pets.push(pet.id);
                model.pets.push(ModelPet { status: PetStatus::Available, stock: 0, stocked: 0 });
            }
            let mut orders = Vec::new();
            for (step, op) in ops.iter().enumerate() {
                let expected = model.apply(op);
                let actual = run(&*store, &pets, &mut orders, op).await;
                prop_assert_eq!(actual, expected, "step {} {:?}", step, op);
                for (i, pet) in pets.iter().enumerate() {
                    let item = store.get_inventory(*pet).await.unwrap();
                    let m = model.pets[i];
                    prop_assert_eq!((item.status, item.quantity), (m.status, m.stock), "pet {} after step {} {:?}", i, step, op);
                    let ordered: i64 = store
                        .list_orders(OrderFilter { pet_id: Some(*pet), ..OrderFilter::default() }, Page::new(100, 0).unwrap())
                        .await
                        .unwrap()
                        .items
                        .iter()
                        .map(|o| o.quantity)
                        .sum();
                    prop_assert_eq!(item.quantity + ordered, m.stocked, "conservation for pet {}", i);
                }
            }
            Ok(())
        })?;
    }
}
