//! An export imported again gives back the same names: the `'` the export writes before a
//! cell a spreadsheet would run as a formula (fullwidth `＝＋－＠` and a leading byte
//! order mark too) is taken off by the import, and no other `'` is.

use serde_json::{Value, json};

use crate::support::spawn_app;

#[tokio::test]
async fn an_export_imported_again_keeps_every_name_and_defuses_every_formula() {
    let names = [
        "=1+2",
        "＝HYPERLINK(\"x\")",
        "＋1",
        "－5 kg",
        "＠SUM(A1)",
        "\u{feff}=1",
        "\u{feff}Rex",
        "'=1+2",
        "''@x",
        "'Bella",
        "O'Brien",
        "-Ana",
    ];
    let shop = spawn_app().await;
    shop.post("/categories", json!({ "name": "Dogs" })).await.expect_status(201);
    let dogs = shop.get("/categories").await.body[0]["id"].clone();
    for name in names {
        shop.post("/pets", json!({ "name": name, "categoryId": dogs, "sku": name, "description": name }))
            .await
            .expect_status(201);
    }
    let export = shop.request(reqwest::Method::GET, "/exports/pets.csv").send().await.unwrap();
    let export = export.text().await.unwrap();
    for (line, name) in export.lines().skip(1).zip(names) {
        let cells: Vec<&str> = line.splitn(3, ',').collect();
        let written = cells[1].trim_matches('"').replace("\"\"", "\"");
        let dangerous =
            name.trim_start_matches('\'').starts_with(['=', '＝', '＋', '－', '＠', '\u{feff}', '-', '@']);
        let expected = if dangerous { format!("'{name}") } else { name.to_owned() };
        assert_eq!(written, expected, "{line}");
    }

    // The file as an import reads it: the same columns but the id.
    let file: String = export.lines().map(|l| format!("{}\r\n", l.split_once(',').unwrap().1)).collect();
    let other = spawn_app().await;
    let imported = other
        .request(reqwest::Method::POST, "/imports/pets?createCategories=true")
        .header("Content-Type", "text/csv")
        .body(file)
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), 201, "{}", imported.text().await.unwrap());
    let pets = other.get("/pets?limit=100").await.expect_status(200).body;
    let pets = pets.as_array().or_else(|| pets["items"].as_array()).unwrap().clone();
    let kept: Vec<(String, String, String)> = pets
        .iter()
        .map(|p: &Value| {
            let text = |f: &str| p[f].as_str().unwrap_or_default().to_owned();
            (text("name"), text("sku"), text("description"))
        })
        .collect();
    let expected: Vec<(String, String, String)> =
        names.iter().map(|n| (n.to_string(), n.to_string(), n.to_string())).collect();
    assert_eq!(kept, expected);
}
