//! List responses: the page as a JSON array, `X-Total-Count`, and an RFC 8288 `Link`
//! header with first/prev/next/last that keeps the request's filters.

use axum::Json;
use axum::body::{Body, Bytes};
use axum::http::header::{CONTENT_TYPE, LINK};
use axum::http::{HeaderName, HeaderValue, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::extract::Params;
use crate::domain::{Page, Paged};

pub static X_TOTAL_COUNT: HeaderName = HeaderName::from_static("x-total-count");

pub fn list_response<T: Serialize>(uri: &Uri, params: &Params, page: Page, paged: Paged<T>) -> Response {
    let link = link_header(uri.path(), params, page, paged.total);
    let mut response = json_array(&paged.items);
    let headers = response.headers_mut();
    headers.insert(X_TOTAL_COUNT.clone(), HeaderValue::from(paged.total));
    // The filters in it are percent-encoded, so it is always a valid header value.
    if let Ok(value) = HeaderValue::from_maybe_shared(Bytes::from(link)) {
        headers.insert(LINK, value);
    }
    response
}

/// Room for one item of a page, about what a pet takes: the buffer `Json` starts with
/// (128 bytes) grew five times for every page of twenty pets.
const ITEM_BYTES: usize = 200;

/// `items` as a JSON array, as `Json` answers it, written into a buffer sized for them.
fn json_array<T: Serialize>(items: &[T]) -> Response {
    let mut body = Vec::with_capacity(2 + items.len() * ITEM_BYTES);
    match serde_json::to_writer(&mut body, items) {
        Ok(()) => {
            let mut response = Response::new(Body::from(body));
            response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        // What `Json` does with a value that does not serialize (none of ours).
        Err(_) => Json(items).into_response(),
    }
}

fn link_header(path: &str, params: &Params, page: Page, total: u64) -> String {
    let limit = u64::from(page.limit());
    let offset = u64::from(page.offset());
    let last = if total == 0 { 0 } else { (total - 1) / limit * limit };
    // The request's filters, encoded once for the four links.
    let mut filters = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in params.without_paging() {
        filters.append_pair(name, value);
    }
    let filters = filters.finish();
    let mut links = String::with_capacity(4 * (path.len() + filters.len() + 48));
    // Pieces pushed one by one: every list response has this header, and `write!` with its
    // formatting machinery was most of what building it cost.
    let mut number = itoa::Buffer::new();
    let mut add = |offset: u64, rel: &str| {
        if !links.is_empty() {
            links.push_str(", ");
        }
        links.push('<');
        links.push_str(path);
        links.push('?');
        if !filters.is_empty() {
            links.push_str(&filters);
            links.push('&');
        }
        links.push_str("limit=");
        links.push_str(number.format(limit));
        links.push_str("&offset=");
        links.push_str(number.format(offset));
        links.push_str(">; rel=\"");
        links.push_str(rel);
        links.push('"');
    };
    add(0, "first");
    if offset > 0 {
        add(offset.saturating_sub(limit).min(last), "prev");
    }
    if offset + limit < total {
        add(offset + limit, "next");
    }
    add(last, "last");
    links
}
