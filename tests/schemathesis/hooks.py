"""schemathesis hooks for the Petstore run (loaded through SCHEMATHESIS_HOOKS by run.sh).

The built-in `positive_data_acceptance` check wants every schema-valid request accepted.
Three rules of the contract (the API's error codes, docs/ARCHITECTURE.md "Error codes")
depend on what is in the database, which no JSON Schema can say, and refuse a well-formed
request by design:

- `invalid_reference`: a `categoryId` or `petId` in the body that names nothing. The schema
  can promise "a positive id", not "the id of a category that exists".
- `validation_failed` from an adjustment whose `delta`, or from a cancellation, deletion or
  smaller order whose returned units, would take the stock above 1,000,000: the schema bounds each
  number on its own; the sum with the current stock is state.
- `422 idempotency_key_reused` from an operation that takes an `Idempotency-Key` (placing,
  changing, cancelling and deleting an order, adjusting stock): a key already used for another
  request. The schema can say what a key looks like, not that it is unused (and the
  examples phase sends the document's one example key with every example body, of every
  one of those operations).

Two more are rules no JSON Schema of this version can state:

- `GET /store/reports/sales` and `GET /exports/orders.csv`: `to` not before `from`, at most
  366 days from one to the other for the report, and the export's two dates both or
  neither (`400 invalid_parameter`): rules between two parameters.
- `POST /imports/pets`: the body is a CSV file, which the document can only call a string;
  its header, columns and lines are checked by the server (`400 validation_failed` naming
  the line and the column), and its categories and barcodes against the shop. Only those
  refusals of the file pass (their message names the line, or the file as a whole:
  `IMPORT_REFUSAL`); any other `validation_failed` there fails the run.
- `POST /store/orders` with `placedAt`, and `PATCH /store/orders/{orderId}` with
  `completedAt`: the moment a till made a write it sends later is taken only within a window
  around the server's clock (at most 2 minutes ahead, at most twice the idempotency window
  old; `400 validation_failed` naming the field): a rule about "now", which a schema of
  fixed values cannot state.
- `PUT /store/settings`: `currency` one of the ISO 4217 codes and `timeZone` one of the IANA
  time zones (`400 validation_failed`): the schema gives their shape; the lists are the
  standards' and change with their releases.

This check is the built-in one with exactly those answers let through (recognised by
status, code, operation and message), so any other 4xx to valid data still fails the run.
run.sh excludes the built-in check in favour of this one.
"""

import json
import re

import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance

ADJUSTMENTS = "/store/inventory/{petId}/adjustments"
ORDERS = "/store/orders"
CHANGES = "/changes"
# How src/domain/import.rs words its refusals of a file: a line (and a column) of it, or
# the file as a whole (too many lines, not readable as CSV, broken off).
IMPORT_REFUSAL = re.compile(
    r"line [1-9][0-9]*(: |, column .*?: )"
    r"|a file may hold at most [0-9]+ pets; line [0-9]+ is one more$"
    r"|the file could not be read: "
    r"|the file broke off before its end$",
    re.DOTALL,
)
# The operations that take an Idempotency-Key (openapi.yaml).
IDEMPOTENT = {("POST", ORDERS), ("PATCH", ORDERS + "/{orderId}"), ("DELETE", ORDERS + "/{orderId}"),
              ("POST", ORDERS + "/{orderId}/cancel"), ("POST", ADJUSTMENTS)}


def _error(response):
    try:
        body = json.loads(response.content)
    except ValueError:
        return None, ""
    if not isinstance(body, dict):
        return None, ""
    return body.get("code"), str(body.get("message", ""))


def _carries_a_null_path_parameter(case):
    # The stateful phase infers links from response fields to path parameters of the same
    # name; a pet without a category has `"categoryId": null`, which the link turns into
    # `/categories/None`. That request is not schema-valid (the parameter is an integer),
    # so refusing it with 400 invalid_parameter is right, not a rejection of valid data.
    return any(value is None or value == "None" for value in (case.path_parameters or {}).values())


def _is_state_dependent_refusal(case, response):
    code, message = _error(response)
    if response.status_code == 400 and code == "invalid_parameter" and _carries_a_null_path_parameter(case):
        return True
    method = case.operation.method.upper()
    # A position the feed does not have (beyond its last change, or purged): which numbers
    # it has is the database's state, not the schema's.
    if response.status_code == 410:
        return code == "gone" and case.operation.path == CHANGES
    if response.status_code == 422:
        return code == "idempotency_key_reused" and (method, case.operation.path) in IDEMPOTENT
    if response.status_code != 400:
        return False
    if code == "invalid_reference":
        return True
    path = case.operation.path
    if path == "/store/reports/sales" and code == "invalid_parameter":
        return "is before from" in message or "a report covers at most" in message
    if path == "/imports/pets" and code == "validation_failed":
        return IMPORT_REFUSAL.match(message) is not None
    if path == "/exports/orders.csv" and code == "invalid_parameter":
        return "is before from" in message or "give both from and to" in message
    if path in (ORDERS, ORDERS + "/{orderId}") and code == "validation_failed":
        if message.startswith(("placedAt ", "completedAt ")) and ("older than" in message or "ahead of" in message):
            return True
    if path == "/store/settings" and method == "PUT" and code == "validation_failed":
        return message.startswith(("currency: currency must be", "timeZone: timeZone must be"))
    returns_stock = (
        (method == "POST" and case.operation.path in (ADJUSTMENTS, ORDERS + "/{orderId}/cancel"))
        or (method in ("PATCH", "DELETE") and case.operation.path == ORDERS + "/{orderId}")
    )
    return code == "validation_failed" and returns_stock and "above the maximum" in message


@schemathesis.check
def positive_data_acceptance_but_state_rules(ctx, response, case):
    """positive_data_acceptance, except the state-dependent refusals of the contract."""
    if _is_state_dependent_refusal(case, response):
        return None
    return positive_data_acceptance(ctx, response, case)
