//! The API reference page at /docs: served without a key, self-contained (every file it
//! names is served here, nothing comes from another origin), and locked down by its
//! Content-Security-Policy. Tests/docs drives the same page in Chromium.

use reqwest::{Method, StatusCode, redirect};

use crate::support::spawn_app;

/// The files `index.html` loads, by their `src` and `href` attributes.
fn referenced(html: &str) -> Vec<&str> {
    ["src=\"", "href=\""]
        .iter()
        .flat_map(|attr| html.split(attr).skip(1).map(|rest| rest.split('"').next().unwrap()))
        .collect()
}

#[tokio::test]
async fn the_page_and_every_file_it_names_are_served_without_a_key() {
    let app = spawn_app().await;
    let page = app.anonymous(Method::GET, "/docs/").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.starts_with("default-src 'self'"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains("<title>Petstore API reference</title>"));

    let files = referenced(&html);
    assert!(
        files.iter().any(|f| f.ends_with(".js")) && files.iter().any(|f| f.ends_with(".css")),
        "{files:?}"
    );
    for file in files {
        assert!(file.starts_with("/docs/"), "{file} is not served by this server");
        let reply = app.anonymous(Method::GET, file).send().await.unwrap();
        assert_eq!(reply.status(), StatusCode::OK, "{file}");
        assert!(reply.headers().contains_key("content-security-policy"), "{file}");
        assert!(!reply.bytes().await.unwrap().is_empty(), "{file}");
    }
}

#[tokio::test]
async fn docs_without_the_slash_redirects_and_unknown_files_are_error_objects() {
    let app = spawn_app().await;
    let http = reqwest::Client::builder().redirect(redirect::Policy::none()).build().unwrap();
    let reply = http.get(format!("{}/docs", app.base_url)).send().await.unwrap();
    assert_eq!(reply.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(reply.headers()["location"], "/docs/");

    let missing = app.anonymous(Method::GET, "/docs/assets/nothing.js").send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["code"], "not_found");
}

#[tokio::test]
async fn the_page_keeps_the_dns_rebinding_defence() {
    let app = spawn_app().await;
    let reply = app.anonymous(Method::GET, "/docs/").header("host", "evil.example:80").send().await.unwrap();
    assert_eq!(reply.status(), StatusCode::FORBIDDEN);
}
