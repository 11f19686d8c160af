//! The sales report, added up in SQL on either engine, holds to the rule it had when each
//! completed order was read into memory: an order counts on the day its completion time
//! reads as in the shop's time zone. And a day too far from now to be a timestamp is a
//! 400 that names its parameter, in the report and in the orders export.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, TimeDelta, TimeZone as _, Utc};
use serde_json::{Value, json};

use crate::support::{TestApp, spawn_app};

/// One completed order of the test: its units and unit price.
struct Sale {
    id: i64,
    quantity: i64,
    unit_price_cents: Option<i64>,
}

/// Completed orders, two in three of a pet priced 12.50, the rest of a pet with no price.
async fn sales(app: &TestApp, count: usize) -> Vec<Sale> {
    let priced = app.pet_with_stock("Rex", 10_000).await;
    app.patch(&format!("/pets/{priced}"), json!({ "price": "12.50" })).await.expect_status(200);
    let free = app.pet_with_stock("Stray", 10_000).await;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let (pet, unit_price_cents) = if i % 3 == 0 { (free, None) } else { (priced, Some(1250)) };
        let quantity = 1 + (i % 3) as i64;
        let order = app
            .post("/store/orders", json!({ "petId": pet, "quantity": quantity, "complete": true }))
            .await
            .expect_status(201);
        out.push(Sale { id: order.body["id"].as_i64().unwrap(), quantity, unit_price_cents });
    }
    out
}

/// Instants that try the rule: every local midnight around the range and the seconds on
/// either side of it, and every 97 minutes across the range and a day either side (so
/// every change of clocks in it is crossed at odd minutes).
fn instants(tz: chrono_tz::Tz, from: NaiveDate, to: NaiveDate) -> Vec<DateTime<Utc>> {
    let mut out = Vec::new();
    let mut day = from - TimeDelta::days(1);
    while day <= to + TimeDelta::days(2) {
        if let Some(midnight) = tz.from_local_datetime(&day.and_hms_opt(0, 0, 0).unwrap()).earliest() {
            let midnight = midnight.with_timezone(&Utc);
            out.extend([midnight - TimeDelta::seconds(1), midnight, midnight + TimeDelta::seconds(1)]);
        }
        day = day.succ_opt().unwrap();
    }
    let (mut at, end) = ((from - TimeDelta::days(1)).and_hms_opt(0, 0, 0).unwrap().and_utc(), {
        (to + TimeDelta::days(2)).and_hms_opt(0, 0, 0).unwrap().and_utc()
    });
    while at < end {
        out.push(at);
        at += TimeDelta::minutes(97);
    }
    out
}

/// The report as reading each order's time in the zone counted it (the rule of
/// `sales_days` before it moved into SQL).
fn read_one_by_one(
    tz: chrono_tz::Tz,
    from: NaiveDate,
    to: NaiveDate,
    completed: &[(DateTime<Utc>, &Sale)],
) -> Vec<Value> {
    let mut days: BTreeMap<NaiveDate, (i64, i64, i64)> = BTreeMap::new();
    let mut day = from;
    while day <= to {
        days.insert(day, (0, 0, 0));
        day = day.succ_opt().unwrap();
    }
    for (at, sale) in completed {
        if let Some(row) = days.get_mut(&at.with_timezone(&tz).date_naive()) {
            row.0 += 1;
            row.1 += sale.quantity;
            row.2 += sale.unit_price_cents.unwrap_or(0) * sale.quantity;
        }
    }
    days.into_iter()
        .map(|(date, (orders, units, cents))| {
            let revenue = format!("{}.{:02}", cents / 100, cents % 100);
            json!({ "date": date.to_string(), "orders": orders, "units": units, "revenue": revenue })
        })
        .collect()
}

#[tokio::test]
async fn the_report_counts_each_order_on_the_day_its_time_reads_as_in_the_shops_zone() {
    let app = spawn_app().await;
    let day = |s: &str| s.parse::<NaiveDate>().unwrap();
    let scenarios = [
        // The example of the report's first unit test: 23:30 UTC is 00:30 the next day.
        ("Europe/Madrid", day("2026-11-23"), day("2026-11-25")),
        // Clocks forward at 02:00, back at 03:00.
        ("Europe/Madrid", day("2026-03-28"), day("2026-03-30")),
        ("Europe/Madrid", day("2026-10-24"), day("2026-10-26")),
        // Back at midnight to 23:00 of the day before.
        ("Asia/Beirut", day("2026-10-24"), day("2026-10-26")),
        // Forward at midnight: the day begins at 01:00.
        ("America/Santiago", day("2026-09-05"), day("2026-09-07")),
        ("Asia/Kathmandu", day("2026-06-01"), day("2026-06-02")),
        ("UTC", day("2026-06-01"), day("2026-06-01")),
    ];
    let tries: Vec<Vec<DateTime<Utc>>> =
        scenarios.iter().map(|(zone, from, to)| instants(zone.parse().unwrap(), *from, *to)).collect();
    let sales = sales(&app, tries.iter().map(Vec::len).max().unwrap()).await;

    for ((zone, from, to), instants) in scenarios.iter().zip(&tries) {
        let tz: chrono_tz::Tz = zone.parse().unwrap();
        let settings = json!({ "shopName": "Pets", "currency": "EUR", "timeZone": zone, "lowStockBelow": 5 });
        app.put("/store/settings", settings).await.expect_status(200);
        // The orders are given the instants to try; those left over, a time long before.
        let at = |i: usize| {
            instants.get(i).copied().unwrap_or(day("2000-01-01").and_hms_opt(0, 0, 0).unwrap().and_utc())
        };
        let cases: String = sales
            .iter()
            .enumerate()
            .map(|(i, s)| format!(" WHEN {} THEN '{}'", s.id, at(i).format("%Y-%m-%dT%H:%M:%SZ")))
            .collect();
        app.db.query(&format!("UPDATE orders SET completed_at = CASE id{cases} END"));
        let completed: Vec<(DateTime<Utc>, &Sale)> =
            sales.iter().enumerate().map(|(i, s)| (at(i), s)).collect();

        let report = app.get(&format!("/store/reports/sales?from={from}&to={to}")).await.expect_status(200);
        let expected = read_one_by_one(tz, *from, *to, &completed);
        assert_eq!(report.body, Value::Array(expected), "{zone} {from}..{to}");
    }
}

#[tokio::test]
async fn a_day_beyond_the_years_of_a_timestamp_is_refused_naming_its_parameter() {
    let app = spawn_app().await;
    for path in ["/store/reports/sales", "/exports/orders.csv"] {
        for (query, name) in [
            ("from=2026-01-01&to=%2B262142-12-31", "to"),
            // The last day chrono knows, one day long: the day after it overflowed (a panic).
            ("from=%2B262142-12-31&to=%2B262142-12-31", "from"),
            ("from=-262143-01-01&to=2026-01-01", "from"),
            ("from=9999-12-31&to=9999-12-31", "from"),
        ] {
            let reply = app.get(&format!("{path}?{query}")).await;
            assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_parameter"), "{path}?{query}");
            let message = reply.body["message"].as_str().unwrap();
            assert!(message.starts_with(&format!("{name} must be a date")), "{path}?{query}: {message}");
        }
    }
    let last = app.get("/exports/orders.csv?from=0001-01-01&to=9999-12-30").await;
    assert_eq!(last.status.as_u16(), 200, "the widest range: {:?}", last.body);
}
