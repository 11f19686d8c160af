//! The document and the router agree in both directions, and the document is what the
//! contract says it is.

use std::collections::BTreeSet;

use petstore::api::operations;
use reqwest::Method;

use crate::support::openapi::{DOC, operation};
use crate::support::spawn_app;

fn documented() -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in DOC["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys().filter(|m| *m != "parameters") {
            ops.insert((method.to_uppercase(), path.clone()));
        }
    }
    ops
}

#[test]
fn every_route_is_documented_and_every_documented_operation_is_routed() {
    let routed: BTreeSet<(String, String)> =
        operations().into_iter().map(|op| (op.method.to_string(), op.path.to_owned())).collect();
    let documented = documented();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(undocumented.is_empty(), "routes missing from openapi.yaml: {undocumented:?}");
    assert!(unrouted.is_empty(), "documented operations with no route: {unrouted:?}");
}

#[test]
fn the_document_has_the_contracts_markers() {
    assert_eq!(DOC["openapi"], "3.0.3");
    assert_eq!(DOC["info"]["title"], "Petstore API");
    assert_eq!(DOC["info"]["version"], "1.0.0");
    let tags: Vec<&str> =
        DOC["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tags, ["Pets", "Store", "Changes", "Staff"]);
    for schema in [
        "PetStatus",
        "NewPet",
        "Pet",
        "Pets",
        "NewCategory",
        "Category",
        "Order",
        "InventoryItem",
        "InventoryUpdate",
        "Error",
    ] {
        assert!(DOC["components"]["schemas"].get(schema).is_some(), "schema {schema}");
    }
    let get_pet = operation(&Method::GET, "/pets/{petId}").unwrap();
    assert_eq!(get_pet["deprecated"], true);
    assert_eq!(get_pet["x-deprecated-sunset"], "2027-06-30");
    assert_eq!(operation(&Method::GET, "/store/orders").unwrap()["x-hideTryItPanel"], true);
    assert_eq!(
        operation(&Method::POST, "/store/inventory/{petId}/adjustments").unwrap()["x-stability"],
        "beta"
    );
    assert_eq!(
        operation(&Method::GET, "/store/inventory/{petId}/adjustments").unwrap()["x-stability"],
        "experimental"
    );
    assert_eq!(DOC["components"]["securitySchemes"]["bearerAuth"]["scheme"], "bearer");
}

/// The permission table in the `Staff` tag is the one in `domain::staff`
/// (`Permission::least_role`): a row for every permission, each role's "yes" where the role
/// holds it, and no other row. A table only people read drifts from the code it describes.
#[test]
fn the_staff_tags_permission_table_is_the_codes() {
    use petstore::domain::{Permission, Role};
    let staff = DOC["tags"].as_array().unwrap().iter().find(|t| t["name"] == "Staff").expect("a Staff tag");
    let rows: BTreeSet<(String, Vec<String>)> = staff["description"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let permission = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((permission.to_owned(), cells[2..5].iter().map(|c| c.to_string()).collect()))
        })
        .collect();
    let expected: BTreeSet<(String, Vec<String>)> = Permission::ALL
        .into_iter()
        .map(|p| {
            let holds = Role::ALL.map(|role| if role.may(p) { "yes" } else { "no" }.to_owned());
            (p.as_str().to_owned(), holds.to_vec())
        })
        .collect();
    assert_eq!(rows, expected, "the Staff tag's permission table against Permission::least_role");
}

#[test]
fn every_operation_has_an_id_a_summary_and_unique_ids() {
    let mut ids = BTreeSet::new();
    for (method, path) in documented() {
        let op = operation(&method.parse().unwrap(), &path).unwrap();
        let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(ids.insert(id.to_owned()), "duplicate operationId {id}");
        assert!(op["summary"].is_string(), "{id} has no summary");
    }
}

#[tokio::test]
async fn the_document_is_served_as_json_and_yaml() {
    let app = spawn_app().await;
    let json = app.send(app.anonymous(Method::GET, "/openapi.json")).await;
    assert_eq!(json.body, **DOC);
    let yaml = app.http.get(format!("{}/openapi.yaml", app.base_url)).send().await.unwrap();
    assert!(yaml.headers()["content-type"].to_str().unwrap().contains("yaml"));
    assert_eq!(yaml.text().await.unwrap(), petstore::openapi::YAML);
}
