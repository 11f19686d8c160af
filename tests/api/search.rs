//! `GET /pets?search=`: the clerk's loose search. The name tolerates one typo from four
//! characters on, the description is matched exactly, and `q` keeps its exact meaning.

use serde_json::json;

use crate::support::{TestApp, spawn_app};

/// Bella, Bello (pending), Rex (a description with "BELLA"), Tom (a description with LIKE's
/// wildcards), Élise (an accented description) and Toot; the dogs are category 1.
async fn shop() -> TestApp {
    let app = spawn_app().await;
    let dogs = app.category("Dogs").await;
    assert_eq!(dogs, 1);
    for pet in [
        json!({ "name": "Bella", "categoryId": dogs }),
        json!({ "name": "Bello", "status": "pending", "categoryId": dogs }),
        json!({ "name": "Rex", "description": "A calm BELLA of a dog", "categoryId": dogs }),
        json!({ "name": "Tom", "description": "Shy, 50% off_today" }),
        json!({ "name": "Élise", "description": "Élise's friend" }),
        json!({ "name": "Toot", "categoryId": dogs }),
    ] {
        app.post("/pets", pet).await.expect_status(201);
    }
    app
}

/// The names found by `query`, after checking that the total says as many.
async fn names(app: &TestApp, query: &str) -> Vec<String> {
    let reply = app.get(&format!("/pets?{query}")).await.expect_status(200);
    let names: Vec<String> =
        reply.body.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(reply.header("x-total-count"), names.len().to_string(), "{query}");
    names
}

#[tokio::test]
async fn search_tolerates_one_typo_in_the_name() {
    let app = shop().await;
    // One letter missing finds Bella; Bello is one letter off "bell".
    assert_eq!(names(&app, "search=Bela").await, ["Bella", "Bello"]);
    assert_eq!(names(&app, "search=BELA").await, ["Bella", "Bello"]);
    // One extra, one different.
    assert_eq!(names(&app, "search=bellla").await, ["Bella"]);
    assert_eq!(names(&app, "search=bxlla").await, ["Bella"]);
    assert_eq!(names(&app, "search=Toit").await, ["Toot"]);
    // Four letters with one too many would be three, which are matched exactly: "Bela"
    // does not find every "bea" or "ela", nor "Rexy" Rex, nor "Tomx" Tom.
    assert!(names(&app, "search=Rexy").await.is_empty());
    assert!(names(&app, "search=Tomx").await.is_empty());
    // Accents and case are folded in names, as `q` folds them.
    assert_eq!(names(&app, "search=elise").await, ["Élise"]);
    assert_eq!(names(&app, "search=%C3%89LIZE").await, ["Élise"]);
    // Two typos are too many.
    assert!(names(&app, "search=bxllx").await.is_empty());
}

#[tokio::test]
async fn search_finds_descriptions_exactly_ignoring_ascii_case() {
    let app = shop().await;
    assert_eq!(names(&app, "search=bella").await, ["Bella", "Bello", "Rex"], "Rex by its description");
    assert_eq!(names(&app, "search=calm%20bella").await, ["Rex"]);
    // No typo in descriptions: "calm bela" is one letter off Rex's description alone.
    assert!(names(&app, "search=calm%20bela").await.is_empty());
    // The case of letters beyond ASCII is kept in descriptions, on both engines alike
    // (names are folded: "élise" finds Élise's name, not the "Élise's" of her description).
    assert!(names(&app, "search=%C3%A9lise's").await.is_empty());
    assert_eq!(names(&app, "search=%C3%89lise's").await, ["Élise"]);
}

#[tokio::test]
async fn a_search_of_three_letters_is_exact() {
    let app = shop().await;
    assert!(names(&app, "search=Rax").await.is_empty(), "one typo in three letters is not tolerated");
    assert_eq!(names(&app, "search=rex").await, ["Rex"]);
    assert_eq!(names(&app, "search=bel").await, ["Bella", "Bello", "Rex"]);
}

#[tokio::test]
async fn search_wildcards_match_themselves() {
    let app = shop().await;
    assert_eq!(names(&app, "search=%25").await, ["Tom"]);
    assert_eq!(names(&app, "search=_").await, ["Tom"]);
    assert_eq!(names(&app, "search=50%25").await, ["Tom"]);
    assert_eq!(names(&app, "search=f_today").await, ["Tom"]);
    // As wildcards, `t__t` would find Toot and `%%%%` everything.
    assert!(names(&app, "search=t__t").await.is_empty());
    assert!(names(&app, "search=%25%25%25%25").await.is_empty());
}

#[tokio::test]
async fn search_keeps_q_the_other_filters_the_sort_and_the_paging() {
    let app = shop().await;
    // `q` is still the exact part of the name.
    assert!(names(&app, "q=bela").await.is_empty());
    assert_eq!(names(&app, "q=bel").await, ["Bella", "Bello"]);
    // Both given: a pet matches both.
    assert_eq!(names(&app, "q=bello&search=bela").await, ["Bello"]);
    assert_eq!(names(&app, "search=bella&status=available").await, ["Bella", "Rex"]);
    assert_eq!(names(&app, "search=bella&sort=-name").await, ["Rex", "Bello", "Bella"]);
    // The Pets screen's list, whose plain form is a walk along one index with a kept count
    // (three available dogs): searched, it is counted as it is read.
    for (sort, expected) in [("name", ["Bella", "Rex"]), ("-name", ["Rex", "Bella"])] {
        let query = format!("search=bella&categoryId=1&status=available&sort={sort}");
        assert_eq!(names(&app, &query).await, expected, "{query}");
    }
    assert_eq!(names(&app, "categoryId=1&status=available&sort=name").await, ["Bella", "Rex", "Toot"]);

    let page = app.get("/pets?search=bella&sort=name&limit=1&offset=1").await.expect_status(200);
    assert_eq!(page.header("x-total-count"), "3");
    assert_eq!(page.body[0]["name"], "Bello");
    let link = page.header("link");
    assert!(link.contains(r#"</pets?search=bella&sort=name&limit=1&offset=2>; rel="next""#), "{link}");
}

#[tokio::test]
async fn a_blank_or_long_search_is_refused() {
    let app = shop().await;
    let long = "x".repeat(101);
    for query in ["search=", "search=%20%20", &format!("search={long}"), "search=a&search=b", "search=a%00"] {
        let reply = app.get(&format!("/pets?{query}")).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_parameter"), "{query}");
    }
    assert_eq!(names(&app, &format!("search={}", "x".repeat(100))).await, Vec::<String>::new());
}
