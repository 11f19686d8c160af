//! A shop's CSV exports (RFC 4180, UTF-8, a header row, CRLF) as streams of text, a page of
//! [`EXPORT_PAGE`] rows at a time, so that a million pets never sit in memory: the API
//! serves them (`GET /exports/*.csv`) and the app writes them to a file. A cell that a
//! spreadsheet would run as a formula is written with a `'` before it, which an import takes
//! off again ([`crate::domain::defuse`]); a number is never one of those.

use std::sync::Arc;

use axum::body::Bytes;
use futures_util::{Stream, StreamExt, stream};

use crate::domain::{
    ActivityEntry, ActivityFilter, DayRange, EXPORT_PAGE, OrderExport, Page as ListPage, PetExport, StaffRef,
    Timestamp,
};
use crate::engine::{Exports, Petstore, Staff};
use crate::error::Result;

/// What to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    Pets,
    /// Each pet's stock.
    Inventory,
    /// The orders placed between two instants, or all.
    Orders(Option<(Timestamp, Timestamp)>),
}

impl Export {
    /// The orders placed on the days of `days` in the shop's time zone, or all of them.
    pub async fn orders(store: &dyn Petstore, days: Option<DayRange>) -> Result<Self> {
        Ok(match days {
            None => Self::Orders(None),
            Some(days) => Self::Orders(Some(days.instants(store.get_settings().await?.time_zone))),
        })
    }

    /// The file's usual name.
    pub fn file_name(&self) -> &'static str {
        match self {
            Self::Pets => "pets.csv",
            Self::Inventory => "inventory.csv",
            Self::Orders(_) => "orders.csv",
        }
    }

    fn header(&self) -> &'static str {
        match self {
            Self::Pets => "id,name,category,price,sku,status,stock,description",
            Self::Inventory => "petId,name,status,stock,updatedAt",
            Self::Orders(_) => {
                "id,petId,pet,quantity,unitPrice,total,complete,createdAt,completedAt,shipDate,customerName,customerPhone,note,placedAt"
            }
        }
    }

    /// The file: its header row, then its rows a page per chunk.
    pub fn csv(self, store: Arc<dyn Exports>) -> impl Stream<Item = Result<Bytes>> + Send + 'static {
        let head = stream::once(std::future::ready(Ok(Bytes::from(format!("{}\r\n", self.header())))));
        let rows = match self {
            Self::Pets => pages(store, None, pet_row).boxed(),
            Self::Inventory => pages(store, None, stock_row).boxed(),
            Self::Orders(created) => pages(store, created, order_row).boxed(),
        };
        head.chain(rows)
    }
}

/// One page of rows of an export, and the key the next page starts after.
trait Page: Sized + Send + 'static {
    fn read(
        store: Arc<dyn Exports>,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
    ) -> impl Future<Output = Result<Vec<Self>>> + Send;
    fn key(&self) -> i64;
}

impl Page for PetExport {
    async fn read(
        store: Arc<dyn Exports>,
        _: Option<(Timestamp, Timestamp)>,
        after: i64,
    ) -> Result<Vec<Self>> {
        store.export_pets(after, EXPORT_PAGE).await
    }
    fn key(&self) -> i64 {
        self.pet.id.get()
    }
}

impl Page for OrderExport {
    async fn read(
        store: Arc<dyn Exports>,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
    ) -> Result<Vec<Self>> {
        store.export_orders(created, after, EXPORT_PAGE).await
    }
    fn key(&self) -> i64 {
        self.order.id.get()
    }
}

/// The rows of `T` as CSV text, a page per chunk, until a page comes back short.
fn pages<T: Page>(
    store: Arc<dyn Exports>,
    created: Option<(Timestamp, Timestamp)>,
    row: fn(&T, &mut String),
) -> impl Stream<Item = Result<Bytes>> + Send {
    stream::unfold(Some(0_i64), move |after| {
        let store = store.clone();
        async move {
            let after = after?;
            match T::read(store, created, after).await {
                Err(e) => Some((Err(e), None)),
                Ok(rows) => {
                    let next =
                        (rows.len() == EXPORT_PAGE as usize).then(|| rows.last().map(T::key)).flatten();
                    let mut text = String::with_capacity(rows.len() * 96);
                    for r in &rows {
                        row(r, &mut text);
                    }
                    if rows.is_empty() && after > 0 { None } else { Some((Ok(Bytes::from(text)), next)) }
                }
            }
        }
    })
}

fn pet_row(p: &PetExport, out: &mut String) {
    let pet = &p.pet;
    line(
        out,
        &[
            &pet.id.to_string(),
            &text(&pet.name),
            &text(p.category.as_deref().unwrap_or("")),
            &pet.price.map(|p| p.to_string()).unwrap_or_default(),
            &text(pet.sku.as_deref().unwrap_or("")),
            pet.status.as_str(),
            &p.stock.to_string(),
            &text(pet.description.as_deref().unwrap_or("")),
        ],
    );
}

fn stock_row(p: &PetExport, out: &mut String) {
    let pet = &p.pet;
    line(
        out,
        &[
            &pet.id.to_string(),
            &text(&pet.name),
            pet.status.as_str(),
            &p.stock.to_string(),
            &p.stock_updated_at.to_string(),
        ],
    );
}

fn order_row(o: &OrderExport, out: &mut String) {
    let order = &o.order;
    let time = |t: Option<Timestamp>| t.map(|t| t.to_string()).unwrap_or_default();
    line(
        out,
        &[
            &order.id.to_string(),
            &order.pet_id.to_string(),
            &text(&o.pet_name),
            &order.quantity.to_string(),
            &order.unit_price.map(|p| p.to_string()).unwrap_or_default(),
            &order.total.map(|t| t.to_string()).unwrap_or_default(),
            if order.complete { "true" } else { "false" },
            &order.created_at.to_string(),
            &time(order.completed_at),
            &time(order.ship_date),
            &text(order.customer_name.as_deref().unwrap_or("")),
            &text(order.customer_phone.as_deref().unwrap_or("")),
            &text(order.note.as_deref().unwrap_or("")),
            // Last, so that a sheet reading the columns by position before it keeps working.
            &time(order.placed_at),
        ],
    );
}

/// The activity log as CSV, newest first, with `filter`'s entries, a page of the log's
/// largest page at a time. The log is paged by offset: an entry written while the file is
/// made moves the rest down by one, and one row is written twice rather than lost.
pub fn activity_csv(
    staff: Arc<dyn Staff>,
    filter: ActivityFilter,
) -> impl Stream<Item = Result<Bytes>> + Send + 'static {
    const HEADER: &str = "id,at,kind,subject,subjectId,staffId,staff,role,approvedById,approvedBy,key,detail";
    let head = stream::once(std::future::ready(Ok(Bytes::from(format!("{HEADER}\r\n")))));
    let rows = stream::unfold(Some(0_u32), move |offset| {
        let (staff, filter) = (staff.clone(), filter.clone());
        async move {
            let offset = offset?;
            let page = match ListPage::new(ListPage::MAX_LIMIT, offset) {
                Ok(page) => page,
                Err(e) => return Some((Err(e), None)),
            };
            match staff.list_activity(filter, page).await {
                Err(e) => Some((Err(e), None)),
                Ok(paged) if paged.items.is_empty() => None,
                Ok(paged) => {
                    let read = offset.saturating_add(paged.items.len() as u32);
                    let next = (u64::from(read) < paged.total).then_some(read);
                    let mut text = String::with_capacity(paged.items.len() * 128);
                    for entry in &paged.items {
                        activity_row(entry, &mut text);
                    }
                    Some((Ok(Bytes::from(text)), next))
                }
            }
        }
    });
    head.chain(rows)
}

fn activity_row(entry: &ActivityEntry, out: &mut String) {
    let actor = entry.actor.as_ref();
    let person = |who: Option<&StaffRef>| -> [String; 3] {
        who.map_or_else(Default::default, |p| [p.id.to_string(), text(p.name.as_str()), p.role.to_string()])
    };
    let [staff_id, staff, role] = person(actor.and_then(|a| a.staff.as_ref()));
    let [approver_id, approver, _] = person(actor.and_then(|a| a.approved_by.as_ref()));
    let subject = entry.subject.as_ref();
    line(
        out,
        &[
            &entry.id.to_string(),
            &entry.at.to_string(),
            entry.kind.as_str(),
            &text(subject.map_or("", |s| s.entity.as_str())),
            &text(subject.map_or("", |s| s.id.as_str())),
            &staff_id,
            &staff,
            &role,
            &approver_id,
            &approver,
            &text(actor.and_then(|a| a.key.as_deref()).unwrap_or("")),
            &text(entry.detail.as_deref().unwrap_or("")),
        ],
    );
}

/// A line of already-made cells, quoted where RFC 4180 needs it.
fn line(out: &mut String, cells: &[&str]) {
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if cell.contains([',', '"', '\r', '\n']) {
            out.push('"');
            out.push_str(&cell.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(cell);
        }
    }
    out.push_str("\r\n");
}

/// Text a person typed, made safe to open in a spreadsheet.
fn text(value: &str) -> String {
    crate::domain::defuse(value).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_as_rfc_4180_says_and_formulas_are_defused() {
        let mut out = String::new();
        line(
            &mut out,
            &[
                &text("Rex, the \"good\" boy"),
                &text("=HYPERLINK(\"x\")"),
                &text("@SUM(A1)"),
                "12.50",
                &text("two\nlines"),
            ],
        );
        assert_eq!(
            out,
            "\"Rex, the \"\"good\"\" boy\",\"'=HYPERLINK(\"\"x\"\")\",'@SUM(A1),12.50,\"two\nlines\"\r\n"
        );
        assert_eq!(text("-5 kg"), "'-5 kg");
        assert_eq!(text("Bella"), "Bella");
    }
}
