//! CSV exports (RFC 4180, UTF-8, a header row, CRLF), streamed a page at a time, so that a
//! million pets never sit in memory. A cell that a spreadsheet would run as a formula
//! (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) is written with a `'`
//! before it (OWASP's advice against CSV injection); a number is never one of those.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::Method;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;
use futures_util::stream;

use super::Routes;
use super::error::ApiResult;
use super::extract::Params;
use super::state::AppState;
use crate::backend::Database;
use crate::domain::{DayRange, EXPORT_PAGE, OrderExport, PetExport, Timestamp};
use crate::error::{Error, Result};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/exports/pets.csv", pets).add(Method::GET, "/exports/inventory.csv", inventory).add(
        Method::GET,
        "/exports/orders.csv",
        orders,
    )
}

async fn pets(State(s): State<AppState>, params: Params) -> ApiResult<Response> {
    params.allow(&[])?;
    let header = "id,name,category,price,sku,status,stock,description";
    Ok(csv_file("pets.csv", header, pages(s.store.clone(), None, pet_row)))
}

async fn inventory(State(s): State<AppState>, params: Params) -> ApiResult<Response> {
    params.allow(&[])?;
    let header = "petId,name,status,stock,updatedAt";
    Ok(csv_file("inventory.csv", header, pages(s.store.clone(), None, stock_row)))
}

async fn orders(State(s): State<AppState>, params: Params) -> ApiResult<Response> {
    params.allow(&["from", "to"])?;
    let day = |name: &str| -> Result<Option<NaiveDate>> {
        let Some(raw) = params.one::<String>(name)? else { return Ok(None) };
        NaiveDate::parse_from_str(&raw, "%Y-%m-%d").map(Some).map_err(|_| {
            Error::invalid_parameter(format!("{name} must be a date like 2026-11-24, got {raw:?}"))
        })
    };
    let created = match (day("from")?, day("to")?) {
        (None, None) => None,
        (Some(from), Some(to)) => {
            let range = DayRange::any(from, to).map_err(Error::invalid_parameter)?;
            Some(range.instants(s.store.get_settings().await?.time_zone))
        }
        _ => return Err(Error::invalid_parameter("give both from and to (YYYY-MM-DD), or neither").into()),
    };
    let header = "id,petId,pet,quantity,unitPrice,total,complete,createdAt,completedAt,shipDate,customerName,customerPhone,note";
    Ok(csv_file("orders.csv", header, pages(s.store.clone(), created, order_row)))
}

/// One page of rows of an export, and the key the next page starts after.
trait Page: Sized + Send + 'static {
    fn read(
        store: Arc<dyn Database>,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
    ) -> impl Future<Output = Result<Vec<Self>>> + Send;
    fn key(&self) -> i64;
}

impl Page for PetExport {
    async fn read(
        store: Arc<dyn Database>,
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
        store: Arc<dyn Database>,
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
    store: Arc<dyn Database>,
    created: Option<(Timestamp, Timestamp)>,
    row: fn(&T, &mut String),
) -> impl futures_util::Stream<Item = Result<Bytes>> + Send {
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

fn csv_file(
    name: &str,
    header: &str,
    rows: impl futures_util::Stream<Item = Result<Bytes>> + Send + 'static,
) -> Response {
    let head = stream::once(std::future::ready(Ok(Bytes::from(format!("{header}\r\n")))));
    let body = Body::from_stream(futures_util::StreamExt::chain(head, rows));
    let disposition = format!("attachment; filename=\"{name}\"");
    ([(CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()), (CONTENT_DISPOSITION, disposition)], body)
        .into_response()
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
    if value.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{value}") } else { value.to_owned() }
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
