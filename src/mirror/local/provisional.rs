//! Orders placed offline are numbered from [`PROVISIONAL_ORDER_IDS`] up, a range no server
//! numbers in, until the server's answer gives each its own id (`provisional_orders`
//! remembers which).

use rusqlite::{Connection, OptionalExtension};

use crate::domain::{OrderId, PROVISIONAL_ORDER_IDS};
use crate::error::{Error, ErrorCode, Result};

/// The next provisional id.
pub(super) fn next(tx: &Connection) -> Result<OrderId> {
    let id: i64 = tx.query_row(
        "UPDATE mirror_state SET next_provisional = next_provisional + 1 RETURNING next_provisional - 1",
        [],
        |r| r.get(0),
    )?;
    OrderId::try_from(id).map_err(Error::internal)
}

/// The server's id of an order placed offline as `provisional`, once replayed.
pub(super) fn server_order_id(c: &Connection, provisional: OrderId) -> Result<Option<OrderId>> {
    Ok(c.prepare_cached("SELECT server FROM provisional_orders WHERE provisional = ?1")?
        .query_row([provisional], |r| r.get(0))
        .optional()?)
}

/// `id`, or the server's id of the order placed offline as `id` once it has one.
pub(super) fn current_order_id(c: &Connection, id: OrderId) -> Result<OrderId> {
    Ok(if id.is_provisional() { server_order_id(c, id)?.unwrap_or(id) } else { id })
}

/// `id` as the server numbered it, or `bad_response` if it lies in the range this till
/// numbers its offline orders in: taken as the server's, it would overwrite or delete an
/// order the till placed offline and has not sent yet.
pub(super) fn servers_order_id(id: OrderId) -> Result<OrderId> {
    if id.is_provisional() {
        return Err(Error::new(
            ErrorCode::BadResponse,
            format!(
                "the server named an order {id}, in the range this till numbers the orders it takes offline in (from {PROVISIONAL_ORDER_IDS}); nothing of it was taken"
            ),
        ));
    }
    Ok(id)
}
