//! List responses: the page as a JSON array, `X-Total-Count`, and an RFC 8288 `Link`
//! header with first/prev/next/last that keeps the request's filters.

use axum::Json;
use axum::http::{HeaderName, HeaderValue, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::extract::Params;
use crate::domain::{Page, Paged};

pub static X_TOTAL_COUNT: HeaderName = HeaderName::from_static("x-total-count");

pub fn list_response<T: Serialize>(uri: &Uri, params: &Params, page: Page, paged: Paged<T>) -> Response {
    let link = link_header(uri.path(), params, page, paged.total);
    let mut response = Json(paged.items).into_response();
    let headers = response.headers_mut();
    headers.insert(X_TOTAL_COUNT.clone(), HeaderValue::from(paged.total));
    if let Ok(value) = HeaderValue::from_str(&link) {
        headers.insert(axum::http::header::LINK, value);
    }
    response
}

fn link_header(path: &str, params: &Params, page: Page, total: u64) -> String {
    let limit = u64::from(page.limit());
    let offset = u64::from(page.offset());
    let last = if total == 0 { 0 } else { (total - 1) / limit * limit };
    let target = |offset: u64| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in params.without_paging() {
            query.append_pair(name, value);
        }
        query.append_pair("limit", &limit.to_string());
        query.append_pair("offset", &offset.to_string());
        format!("<{path}?{}>", query.finish())
    };
    let mut links = vec![format!("{}; rel=\"first\"", target(0))];
    if offset > 0 {
        links.push(format!("{}; rel=\"prev\"", target(offset.saturating_sub(limit).min(last))));
    }
    if offset + limit < total {
        links.push(format!("{}; rel=\"next\"", target(offset + limit)));
    }
    links.push(format!("{}; rel=\"last\"", target(last)));
    links.join(", ")
}
