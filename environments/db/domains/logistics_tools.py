"""The logistics domain's tools, the rules a refusal may name, its policy and the `Domain` itself
(its tables and seed data are in `logistics.py`)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from envhub.errors import AgentError
from environments.db.core import LIMIT, Domain, P, Tool, add, answer_tools, get_or_404, listing, row_dict, search
from environments.db.domains.logistics import (
    MAX_WEIGHT_G,
    NOW,
    STATUSES,
    TODAY,
    Carrier,
    LogisticsBase,
    Shipment,
    TrackingEvent,
    Vehicle,
    Warehouse,
    seed,
)


def _shipment(s: Session, shipment_id: int) -> Shipment:
    return get_or_404(s, Shipment, shipment_id, "shipment")


def _event(s: Session, sh: Shipment, status: str, at: dt.datetime, note: str = "") -> None:
    add(s, TrackingEvent(shipment_id=sh.id, at=at, status=status, note=note))


def search_shipments(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Shipment, f, text_cols=("recipient", "destination_city"), limit=limit)
    return listing(rows, total, "shipments")


def get_shipment(s: Session, shipment_id: int) -> dict:
    sh = _shipment(s, shipment_id)
    events = s.scalars(select(TrackingEvent).where(TrackingEvent.shipment_id == sh.id).order_by(TrackingEvent.id))
    return {**row_dict(sh), "events": [row_dict(e) for e in events]}


def list_carriers(s: Session) -> dict:
    out = []
    for c in s.scalars(select(Carrier).order_by(Carrier.id)):
        vs = s.scalars(select(Vehicle).where(Vehicle.carrier_id == c.id).order_by(Vehicle.id))
        out.append({**row_dict(c), "vehicles": [row_dict(v) for v in vs]})
    return {"carriers": out}


def list_warehouses(s: Session) -> dict:
    return {"warehouses": [row_dict(w) for w in s.scalars(select(Warehouse).order_by(Warehouse.id))]}


def create_shipment(s: Session, origin_id: int, recipient: str, destination_city: str, weight_kg: float) -> dict:
    get_or_404(s, Warehouse, origin_id, "warehouse")
    grams = round(weight_kg * 1000)
    if grams <= 0 or grams > MAX_WEIGHT_G:
        raise AgentError(f"weight must be between 0.001 and {MAX_WEIGHT_G // 1000} kg")
    sh = Shipment(origin_id=origin_id, carrier_id=None, recipient=recipient, destination_city=destination_city,
                  weight_g=grams, status="created", shipped_at=None, delivered_at=None, tracking_no="")
    add(s, sh)
    sh.tracking_no = f"TRK{700000 + sh.id * 13}"
    _event(s, sh, "created", NOW)
    return get_shipment(s, sh.id)


def assign_carrier(s: Session, shipment_id: int, carrier_id: int) -> dict:
    sh = _shipment(s, shipment_id)
    carrier = get_or_404(s, Carrier, carrier_id, "carrier")
    if not carrier.active:
        raise AgentError(f"carrier {carrier.name} is not active and cannot take shipments")
    if sh.status != "created":
        raise AgentError(f"shipment {sh.tracking_no} is {sh.status}; carriers can only be assigned before shipping")
    sh.carrier_id = carrier.id
    return row_dict(sh)


def mark_shipped(s: Session, shipment_id: int, shipped_at: dt.datetime) -> dict:
    sh = _shipment(s, shipment_id)
    if sh.status != "created":
        raise AgentError(f"shipment {sh.tracking_no} is {sh.status}; only created shipments can ship")
    if sh.carrier_id is None:
        raise AgentError(f"shipment {sh.tracking_no} has no carrier assigned")
    if shipped_at > NOW:
        raise AgentError("shipped_at is in the future")
    sh.status, sh.shipped_at = "in_transit", shipped_at
    _event(s, sh, "in_transit", shipped_at)
    return row_dict(sh)


def mark_delivered(s: Session, shipment_id: int, delivered_at: dt.datetime) -> dict:
    sh = _shipment(s, shipment_id)
    if sh.status != "in_transit" or sh.shipped_at is None:
        raise AgentError(f"shipment {sh.tracking_no} is {sh.status}; only shipments in transit can be delivered")
    if delivered_at < sh.shipped_at:
        raise AgentError(f"a shipment cannot be delivered ({delivered_at:%Y-%m-%d %H:%M}) before it shipped "
                         f"({sh.shipped_at:%Y-%m-%d %H:%M})")
    if delivered_at > NOW:
        raise AgentError("delivered_at is in the future")
    sh.status, sh.delivered_at = "delivered", delivered_at
    _event(s, sh, "delivered", delivered_at)
    return row_dict(sh)


def cancel_shipment(s: Session, shipment_id: int) -> dict:
    sh = _shipment(s, shipment_id)
    if sh.status != "created":
        raise AgentError(f"shipment {sh.tracking_no} is {sh.status}; only shipments not yet shipped can be cancelled")
    sh.status = "cancelled"
    _event(s, sh, "cancelled", NOW)
    return row_dict(sh)


def update_destination(s: Session, shipment_id: int, **changes: object) -> dict:
    sh = _shipment(s, shipment_id)
    if not changes:
        raise AgentError("nothing to update: give recipient and/or destination_city")
    if sh.status != "created":
        raise AgentError(f"shipment {sh.tracking_no} is {sh.status}; the destination is fixed once it ships")
    for k, v in changes.items():
        setattr(sh, k, v)
    return row_dict(sh)


SID = P("integer", "Shipment id (not the tracking number).", minimum=1)

RULES = {
    "not_in_transit": "only shipments in transit can be delivered; figure: the shipment's status",
    "before_shipped": "a delivery cannot predate the shipping; figure: when it shipped (YYYY-MM-DD HH:MM)",
    "already_shipped": "only shipments not yet shipped can be cancelled, re-addressed or given a carrier; "
                       "figure: the shipment's status",
    "carrier_inactive": "inactive carriers take no shipments; figure: the carrier's id",
}

TOOLS = [
    Tool("search_shipments", "Find shipments by tracking number, status, carrier, origin or destination.",
         {"tracking_no": P("string", required=False, max_len=16),
          "status": P("string", required=False, enum=STATUSES),
          "carrier_id": P("integer", required=False, minimum=1), "origin_id": P("integer", required=False, minimum=1),
          "destination_city": P("string", required=False, max_len=80), "recipient": P("string", required=False),
          "limit": LIMIT}, search_shipments),
    Tool("get_shipment", "A shipment with its tracking events.", {"shipment_id": SID}, get_shipment),
    Tool("list_carriers", "Carriers with their vehicles.", {}, list_carriers),
    Tool("list_warehouses", "Warehouses.", {}, list_warehouses),
    Tool("create_shipment", "Create a shipment (at most 30 kg) at a warehouse.",
         {"origin_id": P("integer", "Warehouse id.", minimum=1), "recipient": P("string", max_len=120),
          "destination_city": P("string", max_len=80), "weight_kg": P("number", minimum=0.001, maximum=30)},
         create_shipment, writes=True),
    Tool("assign_carrier", "Assign an active carrier to a shipment that has not shipped.",
         {"shipment_id": SID, "carrier_id": P("integer", minimum=1)}, assign_carrier, writes=True),
    Tool("mark_shipped", "Record that a shipment left (needs a carrier).",
         {"shipment_id": SID, "shipped_at": P("datetime")}, mark_shipped, writes=True),
    Tool("mark_delivered", "Record delivery of a shipment in transit (not before it shipped).",
         {"shipment_id": SID, "delivered_at": P("datetime")}, mark_delivered, writes=True),
    Tool("cancel_shipment", "Cancel a shipment that has not shipped.", {"shipment_id": SID}, cancel_shipment,
         writes=True),
    Tool("update_destination", "Change the recipient or destination city before shipping.",
         {"shipment_id": SID, "recipient": P("string", required=False, max_len=120),
          "destination_city": P("string", required=False, max_len=80)}, update_destination, writes=True),
    *answer_tools(RULES),
]

POLICY = ("Policy: a shipment is delivered only while in transit and never before it shipped; only shipments not yet "
          "shipped can be cancelled, re-addressed or given a carrier; inactive carriers take no shipments; the "
          "current time is 2025-03-14 12:00.")

DOMAIN = Domain(name="logistics", title="Logistics and shipments", language="en", base=LogisticsBase, seed=seed,
                tools=TOOLS, today=TODAY, policy=POLICY)
