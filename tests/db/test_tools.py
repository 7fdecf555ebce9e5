"""Typed tools and business rules: bad input is an AgentError that changes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from environments.db.core import P, convert
from envhub.tools import check_object
from envhub.errors import AgentError
from tests.db.conftest import call


def count(handle, table: str) -> int:
    with handle.engine.connect() as c:
        return int(c.execute(text(f"select count(*) from {table}")).scalar_one())


def test_refund_cannot_exceed_what_was_paid(open_db):
    db = open_db("retail")
    order = call(db, "retail", "get_order", order_id=5)
    refundable = float(order["refundable"])
    before = count(db, "refunds")
    with pytest.raises(AgentError, match="exceeds the refundable amount"):
        call(db, "retail", "refund_order", order_id=5, amount=refundable + 0.01, reason="x")
    assert count(db, "refunds") == before
    call(db, "retail", "refund_order", order_id=5, amount=refundable, reason="full refund")
    assert call(db, "retail", "get_order", order_id=5)["refundable"] == "0.00"


def test_failed_call_rolls_back_partial_work(open_db):
    db = open_db("retail")
    p1 = call(db, "retail", "search_products", active=True, limit=1)["products"][0]
    p2 = call(db, "retail", "search_products", active=True, max_stock=9, limit=1)["products"][0]
    orders = count(db, "orders")
    with pytest.raises(AgentError, match="insufficient stock"):
        call(db, "retail", "create_order", customer_id=1,
             items=[{"product_id": p1["id"], "quantity": 1}, {"product_id": p2["id"], "quantity": p2["stock"] + 1}])
    assert call(db, "retail", "get_product", product_id=p1["id"])["stock"] == p1["stock"]
    assert count(db, "orders") == orders


def test_shift_cannot_overlap(open_db):
    db = open_db("hr")
    emp = call(db, "hr", "get_employee", employee_id=1)
    future = [s for s in emp["shifts"] if s["starts_at"] > "2025-03-15"]
    assert future, "seed has future shifts for employee 1"
    s = future[0]
    start = s["starts_at"][:11] + f"{int(s['starts_at'][11:13]) + 1:02d}:00"
    end = s["starts_at"][:11] + f"{int(s['starts_at'][11:13]) + 3:02d}:00"
    with pytest.raises(AgentError, match="overlaps shift"):
        call(db, "hr", "create_shift", employee_id=1, starts_at=start, ends_at=end, role="floor")
    with pytest.raises(AgentError, match="longer than 12 hours"):
        call(db, "hr", "create_shift", employee_id=1, starts_at="2025-04-01T06:00", ends_at="2025-04-01T20:00",
             role="floor")


def test_shipment_cannot_be_delivered_before_it_ships(open_db):
    db = open_db("logistics")
    transit = call(db, "logistics", "search_shipments", status="in_transit", limit=1)["shipments"][0]
    early = transit["shipped_at"][:10] + "T00:00"
    with pytest.raises(AgentError, match="before it shipped"):
        call(db, "logistics", "mark_delivered", shipment_id=transit["id"], delivered_at=early)
    call(db, "logistics", "mark_delivered", shipment_id=transit["id"], delivered_at="2025-03-14T12:00")
    with pytest.raises(AgentError, match="only shipments in transit"):
        call(db, "logistics", "mark_delivered", shipment_id=transit["id"], delivered_at="2025-03-14T12:00")


def test_bank_overdraft_and_clinic_double_booking(open_db):
    bank = open_db("bank")
    acct = call(bank, "bank", "search_accounts", status="open", kind="savings", limit=1)["accounts"][0]
    other = call(bank, "bank", "search_accounts", status="open", kind="checking", limit=1)["accounts"][0]
    with pytest.raises(AgentError, match="insufficient funds"):
        call(bank, "bank", "transfer", from_account_id=acct["id"], to_account_id=other["id"],
             amount=float(acct["balance"]) + 1, memo="too much")
    clinic = open_db("clinic")
    booked = call(clinic, "clinic", "list_appointments", status="booked", date="2025-03-18", limit=1)["appointments"][0]
    with pytest.raises(AgentError, match="already has appointment"):
        call(clinic, "clinic", "book_appointment", patient_id=1 if booked["patient_id"] != 1 else 2,
             doctor_id=booked["doctor_id"], starts_at=booked["starts_at"])


@pytest.mark.parametrize("payload", ["x' OR '1'='1", "'; DROP TABLE customers; --", "%", "_", "\\", "\" OR 1=1 --"])
def test_sql_injection_is_just_data(open_db, payload):
    db = open_db("retail")
    customers = count(db, "customers")
    assert call(db, "retail", "search_customers", name=payload)["total"] == 0
    call(db, "retail", "update_customer", customer_id=3, city=payload)
    assert call(db, "retail", "get_customer", customer_id=3)["city"] == payload
    assert call(db, "retail", "search_customers", city=payload)["total"] == 1  # wildcards escaped: exact match only
    assert count(db, "customers") == customers


@pytest.mark.parametrize(("args", "message"), [
    ({"customer_id": "3", "tier": "gold"}, "expected an integer"),
    ({"customer_id": True, "tier": "gold"}, "expected an integer"),
    ({"customer_id": 3, "tier": "diamond"}, "must be one of"),
    ({"customer_id": 3, "tier": "gold", "admin": True}, "is not a parameter of this tool"),
    ({"tier": "gold"}, "'customer_id': is required"),
    ({"customer_id": 10**30, "tier": "gold"}, "must be at most 2147483647"),
    ({"customer_id": 3, "city": "\ud800"}, "not valid Unicode"),
    ({"customer_id": 3, "city": "x" * 10_000}, "at most 80 characters"),
    ({"customer_id": 3, "city": "a\x00b"}, "NUL"),
    ({"customer_id": 99999, "tier": "gold"}, "customer 99999 not found"),
    ({"customer_id": 3}, "nothing to update"),
])
def test_bad_arguments_are_agent_errors(open_db, args, message):
    db = open_db("retail")
    with pytest.raises(AgentError, match=message):
        call(db, "retail", "update_customer", **args)


def check_args(params, args):
    return convert(params, check_object(params, args))


def test_money_and_dates_are_checked():
    with pytest.raises(AgentError, match="2 decimal places"):
        check_args({"amount": P("money")}, {"amount": 1.005})
    with pytest.raises(AgentError, match="finite"):
        check_args({"amount": P("money")}, {"amount": float("nan")})
    with pytest.raises(AgentError, match="YYYY-MM-DD"):
        check_args({"d": P("date")}, {"d": "14/03/2025"})
    assert check_args({"amount": P("money")}, {"amount": 12.5}) == {"amount": 1250}
    assert check_args({"amount": P("money")}, {"amount": 0.29}) == {"amount": 29}


def test_unknown_tool_is_an_agent_error(open_db):
    db = open_db("bank")
    with pytest.raises(AgentError, match='unknown tool "drop_table"'):
        call(db, "bank", "drop_table", name="accounts")
