"""Task intents for the logistics domain."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from environments.db.domains.logistics import NOW, Carrier, Shipment, Warehouse
from environments.db.intents import Ctx, Draft, call, grounds, items, refuse, scalar


def _ships(c: Ctx, status: str) -> list[Shipment]:
    return list(c.s.scalars(select(Shipment).where(Shipment.status == status).order_by(Shipment.id)))


def _carriers(c: Ctx) -> list[Carrier]:
    return list(c.s.scalars(select(Carrier).where(Carrier.active.is_(True)).order_by(Carrier.id)))


def _t(x: dt.datetime) -> str:
    return f"{x:%Y-%m-%dT%H:%M}"


def assign(c: Ctx) -> Draft:
    sh = c.pick([x for x in _ships(c, "created") if x.carrier_id is None])
    car = c.pick(_carriers(c))
    prompt = c.say(f"Assign {car.name} to shipment {sh.tracking_no} ({sh.recipient}).",
                   f"Shipment {sh.tracking_no} for {sh.recipient} still has no carrier; give it to {car.name}.")
    return Draft("assign-carrier", f"Carrier for {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no), call("list_carriers"),
                  call("assign_carrier", shipment_id=sh.id, carrier_id=car.id)], "write")


def ship(c: Ctx) -> Draft:
    sh = c.pick([x for x in _ships(c, "created") if x.carrier_id is not None])
    at = NOW - dt.timedelta(hours=c.pick([1, 2, 3, 5]), minutes=c.pick([0, 15, 30]))
    prompt = c.say(f"Shipment {sh.tracking_no} left the warehouse at {at:%Y-%m-%d %H:%M}. Record it as shipped.",
                   f"Mark {sh.tracking_no} (to {sh.recipient}) shipped, departure time {at:%Y-%m-%d %H:%M}.")
    return Draft("mark-shipped", f"Ship {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no),
                  call("mark_shipped", shipment_id=sh.id, shipped_at=_t(at))], "write", tags=["multi-entity"])


def deliver(c: Ctx) -> Draft:
    sh = c.pick(_ships(c, "in_transit"))
    at = min(NOW, sh.shipped_at + dt.timedelta(hours=c.pick([5, 9, 20])))
    prompt = c.say(f"{sh.recipient} received shipment {sh.tracking_no} at {at:%Y-%m-%d %H:%M}. Record the delivery.",
                   f"Proof of delivery for {sh.tracking_no}: delivered {at:%Y-%m-%d %H:%M}. Update the shipment.")
    return Draft("mark-delivered", f"Deliver {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no),
                  call("mark_delivered", shipment_id=sh.id, delivered_at=_t(at))], "write", tags=["multi-entity"])


def cancel(c: Ctx) -> Draft:
    sh = c.pick(_ships(c, "created"))
    prompt = c.say(f"The sender withdrew shipment {sh.tracking_no} to {sh.recipient}; cancel it.",
                   f"Cancel shipment {sh.tracking_no} to {sh.recipient} in {sh.destination_city}.")
    return Draft("cancel-shipment", f"Cancel {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no), call("cancel_shipment", shipment_id=sh.id)],
                 "write")


def readdress(c: Ctx) -> Draft:
    sh = c.pick(_ships(c, "created"))
    city = c.pick(sorted({x.destination_city for x in _ships(c, "delivered")} - {sh.destination_city}))
    prompt = c.say(f"{sh.recipient} moved to {city}. Change the destination of shipment {sh.tracking_no}.",
                   f"Re-route {sh.tracking_no}: the new destination city is {city}.")
    return Draft("readdress", f"Re-route {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no),
                  call("update_destination", shipment_id=sh.id, destination_city=city)], "write")


def create(c: Ctx) -> Draft:
    wh = c.pick(list(c.s.scalars(select(Warehouse).order_by(Warehouse.id))))
    car = c.pick(_carriers(c))
    city = c.pick(sorted({x.destination_city for x in _ships(c, "delivered")}))
    recipient = c.pick(["Dana Whitfield", "Omar Haddad", "Lena Park", "Marco Bellini", "Ada Okafor"])
    kg = c.pick([1.5, 2.25, 7.0, 12.4])
    prompt = c.say(f"Create a {kg} kg shipment from {wh.code} to {recipient} in {city}, and assign it to {car.name}.",
                   f"New parcel: {kg} kg, origin warehouse {wh.code}, recipient {recipient}, {city}. Carrier: "
                   f"{car.name}.")
    new_id = int(c.s.scalar(select(Shipment.id).order_by(Shipment.id.desc()))) + 1
    return Draft("create-shipment", f"New shipment to {recipient}", prompt,
                 [call("list_warehouses"), call("list_carriers"),
                  call("create_shipment", origin_id=wh.id, recipient=recipient, destination_city=city, weight_kg=kg),
                  call("assign_carrier", shipment_id=new_id, carrier_id=car.id)], "write", difficulty="medium",
                 tags=["multi-entity"])


def manifest(c: Ctx) -> Draft | None:
    transit = _ships(c, "in_transit")
    k = c.pick([15, 16, 17])
    batch = sorted(c.rng.sample(transit, min(k, len(transit))), key=lambda x: x.id)
    if len(batch) < 15:
        return None
    at = NOW - dt.timedelta(minutes=30)
    nums = ", ".join(x.tracking_no for x in batch)
    prompt = c.say(f"The evening manifest says these shipments were all delivered at {at:%Y-%m-%d %H:%M}: {nums}. "
                   "Record each delivery.",
                   f"Record delivery at {at:%Y-%m-%d %H:%M} for every one of: {nums}.")
    return Draft("delivery-manifest", f"Deliver {len(batch)} shipments", prompt,
                 [call("mark_delivered", shipment_id=x.id, delivered_at=_t(at)) for x in batch], "write",
                 difficulty="hard", tags=["long"])


def ask_status(c: Ctx) -> Draft:
    sh = c.pick(list(c.s.scalars(select(Shipment).order_by(Shipment.id))))
    prompt = c.say(f"What is the current status of shipment {sh.tracking_no}?",
                   f"Where is {sh.tracking_no} in its lifecycle (its status)?")
    return Draft("ask-status", f"Status of {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no), call("submit_answer", answer=sh.status)],
                 "read", answer=scalar(sh.status, sh.status.replace("_", " ")))


def ask_in_transit(c: Ctx) -> Draft:
    car = c.pick(_carriers(c))
    n = len([x for x in _ships(c, "in_transit") if x.carrier_id == car.id])
    prompt = c.say(f"How many shipments does {car.name} have in transit right now?",
                   f"Count the in-transit shipments handled by {car.name}.")
    return Draft("ask-in-transit", f"In transit with {car.name}", prompt,
                 [call("list_carriers"), call("search_shipments", carrier_id=car.id, status="in_transit", limit=100),
                  call("submit_answer", answer=str(n))], "read", answer=scalar(n))


def ask_heaviest(c: Ctx) -> Draft | None:
    wh = c.pick(list(c.s.scalars(select(Warehouse).order_by(Warehouse.id))))
    waiting = sorted((x for x in _ships(c, "created") if x.origin_id == wh.id), key=lambda x: -x.weight_g)
    if len(waiting) < 2 or waiting[0].weight_g == waiting[1].weight_g:
        return None
    prompt = c.say(f"Among shipments waiting at {wh.code} (status created), which is the heaviest? Give its tracking "
                   "number.", f"Tracking number of the heaviest not-yet-shipped shipment at warehouse {wh.code}?")
    return Draft("ask-heaviest", f"Heaviest waiting at {wh.code}", prompt,
                 [call("list_warehouses"), call("search_shipments", origin_id=wh.id, status="created", limit=100),
                  call("submit_answer", answer=waiting[0].tracking_no)], "read",
                 answer=scalar(waiting[0].tracking_no), difficulty="medium")


def ask_unassigned(c: Ctx) -> Draft | None:
    wh = c.pick(list(c.s.scalars(select(Warehouse).order_by(Warehouse.id))))
    found = [x for x in _ships(c, "created") if x.origin_id == wh.id and x.carrier_id is None]
    if not 1 <= len(found) <= 8:
        return None
    prompt = c.say(f"List the tracking numbers of shipments at {wh.code} that still have no carrier.",
                   f"Which created shipments from warehouse {wh.code} lack a carrier? Tracking numbers, please.")
    return Draft("ask-unassigned", f"Unassigned at {wh.code}", prompt,
                 [call("list_warehouses"), call("search_shipments", origin_id=wh.id, status="created", limit=100),
                  call("submit_answer", answer=", ".join(x.tracking_no for x in found))], "read",
                 answer=items(*[[x.tracking_no] for x in found]), difficulty="medium")


def refuse_early_delivery(c: Ctx) -> Draft:
    sh = c.pick(_ships(c, "in_transit"))
    at = sh.shipped_at - dt.timedelta(hours=c.pick([2, 6, 12]))
    g = grounds("before_shipped", f"{sh.shipped_at:%Y-%m-%d %H:%M}", f"{sh.shipped_at:%Y-%m-%dT%H:%M}")
    prompt = c.say(f"Record shipment {sh.tracking_no} as delivered at {at:%Y-%m-%d %H:%M}.",
                   f"The driver says {sh.tracking_no} was handed over at {at:%Y-%m-%d %H:%M}; log the delivery.")
    return Draft("refuse-early-delivery", f"Delivery before shipping for {sh.tracking_no}", prompt,
                 [call("get_shipment", shipment_id=sh.id),
                  refuse(g, "delivery time is before the shipment shipped")], "refusal", grounds=g,
                 forbidden=[call("mark_delivered", shipment_id=sh.id, delivered_at=_t(at))], difficulty="medium",
                 tags=["policy"])


def refuse_cancel_shipped(c: Ctx) -> Draft:
    sh = c.pick(_ships(c, "in_transit") + _ships(c, "delivered"))
    g = grounds("already_shipped", sh.status)
    prompt = c.say(f"Cancel shipment {sh.tracking_no}.", f"Please void shipment {sh.tracking_no}; the order was "
                   "withdrawn.")
    return Draft("refuse-cancel-shipped", f"Cancel {sh.status} {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no),
                  refuse(g, f"shipment is already {sh.status}")], "refusal", grounds=g,
                 forbidden=[call("cancel_shipment", shipment_id=sh.id)], tags=["policy"])


def refuse_inactive_carrier(c: Ctx) -> Draft:
    sh = c.pick(_ships(c, "created"))
    car = c.pick(list(c.s.scalars(select(Carrier).where(Carrier.active.is_(False)))))
    g = grounds("carrier_inactive", car.id)
    prompt = c.say(f"Hand shipment {sh.tracking_no} to {car.name}.", f"Assign carrier {car.name} to {sh.tracking_no}.")
    return Draft("refuse-inactive-carrier", f"Inactive carrier for {sh.tracking_no}", prompt,
                 [call("list_carriers"), refuse(g, f"{car.name} is inactive")], "refusal", grounds=g,
                 forbidden=[call("assign_carrier", shipment_id=sh.id, carrier_id=car.id)], tags=["policy"])


def ask_shipped_at(c: Ctx) -> Draft:
    # Dropped from INTENTS: shipping times fall on the hour within a few days (about 235 values), so
    # over a set of drawn databases three tasks in thirty can share one.
    sh = c.pick([x for x in _ships(c, "in_transit") + _ships(c, "delivered") if x.shipped_at is not None])
    at = f"{sh.shipped_at:%Y-%m-%d %H:%M}"
    prompt = c.say(f"When did shipment {sh.tracking_no} ship? Give the date and time (YYYY-MM-DD HH:MM).",
                   f"The recipient of {sh.tracking_no} asks when it left the warehouse. What is its shipping time "
                   "(YYYY-MM-DD HH:MM)?")
    return Draft("ask-shipped-at", f"Shipping time of {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no), call("submit_answer", answer=at)], "read",
                 answer=scalar(at, f"{sh.shipped_at:%Y-%m-%dT%H:%M}"))


def ask_first_shipped(c: Ctx) -> Draft:
    # Not when (shipping times fall on the hour: a few hundred values): which shipment, by tracking number.
    car = c.pick(_carriers(c))
    status = c.pick(["in_transit", "delivered"])
    mine = sorted((x for x in _ships(c, status) if x.carrier_id == car.id and x.shipped_at is not None),
                  key=lambda x: x.shipped_at)
    if len(mine) < 2 or mine[0].shipped_at == mine[1].shipped_at:
        raise LookupError(f"{car.name} has no one earliest {status} shipment")
    first = mine[0]
    state = {"in_transit": "still in transit", "delivered": "already delivered"}[status]
    prompt = c.say(f"Of the shipments {car.name} has {state}, which one left the warehouse first? Give its tracking "
                   "number.",
                   f"Find the earliest-shipped {status.replace('_', '-')} shipment handled by {car.name} and report "
                   "its tracking number.")
    return Draft("ask-first-shipped", f"Earliest {status} shipment of {car.name}", prompt,
                 [call("list_carriers"), call("search_shipments", carrier_id=car.id, status=status, limit=100),
                  call("submit_answer", answer=first.tracking_no)], "read", answer=scalar(first.tracking_no),
                 difficulty="medium", tags=["multi-entity"])


def ask_transit_weight(c: Ctx) -> Draft:
    # Not how many (a dozen or so for each carrier, so a constant earns it): the load in grams.
    car = c.pick(_carriers(c))
    moving = [x for x in _ships(c, "in_transit") if x.carrier_id == car.id]
    if not moving:
        raise LookupError(f"{car.name} has nothing in transit")
    grams = sum(x.weight_g for x in moving)
    prompt = c.say(f"What is the total weight, in grams, of the shipments {car.name} has in transit right now?",
                   f"Add up the weights (grams) of every in-transit shipment handled by {car.name}.")
    return Draft("ask-transit-weight", f"In-transit load of {car.name}", prompt,
                 [call("list_carriers"), call("search_shipments", carrier_id=car.id, status="in_transit", limit=100),
                  call("submit_answer", answer=str(grams))], "read", answer=scalar(grams, f"{grams} g"),
                 difficulty="medium")


def ask_heaviest_recipient(c: Ctx) -> Draft | None:
    # The recipient, not the tracking number: a tracking number is a function of the shipment's id,
    # and the heaviest waiting shipment's id repeats from one database to the next.
    wh = c.pick(list(c.s.scalars(select(Warehouse).order_by(Warehouse.id))))
    waiting = sorted((x for x in _ships(c, "created") if x.origin_id == wh.id), key=lambda x: -x.weight_g)
    if len(waiting) < 2 or waiting[0].weight_g == waiting[1].weight_g:
        return None
    prompt = c.say(f"Among shipments waiting at {wh.code} (status created), which is the heaviest? Who is it addressed "
                   "to (the recipient's name)?",
                   f"Whose parcel is the heaviest not-yet-shipped shipment at warehouse {wh.code}? Give the recipient.")
    return Draft("ask-heaviest-recipient", f"Recipient of the heaviest waiting at {wh.code}", prompt,
                 [call("list_warehouses"), call("search_shipments", origin_id=wh.id, status="created", limit=100),
                  call("submit_answer", answer=waiting[0].recipient)], "read", answer=scalar(waiting[0].recipient),
                 difficulty="medium")


def ask_recipient(c: Ctx) -> Draft:
    sh = c.pick(list(c.s.scalars(select(Shipment).order_by(Shipment.id))))
    prompt = c.say(f"Who is the recipient of shipment {sh.tracking_no}?",
                   f"A caller asks about {sh.tracking_no}; whom is it addressed to? Give the recipient's name.")
    return Draft("ask-recipient", f"Recipient of {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no), call("submit_answer", answer=sh.recipient)],
                 "read", answer=scalar(sh.recipient))


def ask_city_in_transit(c: Ctx) -> Draft | None:
    city = c.pick(sorted({x.destination_city for x in _ships(c, "in_transit")}))
    car = c.pick(_carriers(c))
    found = [x for x in _ships(c, "in_transit") if x.destination_city == city and x.carrier_id == car.id]
    if not 1 <= len(found) <= 6:
        return None
    prompt = c.say(f"Which shipments is {car.name} carrying to {city} right now (in transit)? "
                   "List the tracking numbers.",
                   f"Tracking numbers of the in-transit {car.name} shipments bound for {city}, please.")
    return Draft("ask-city-in-transit", f"{car.name} in transit to {city}", prompt,
                 [call("list_carriers"),
                  call("search_shipments", carrier_id=car.id, status="in_transit", destination_city=city, limit=100),
                  call("submit_answer", answer=", ".join(x.tracking_no for x in found))], "read",
                 answer=items(*[[x.tracking_no] for x in found]), difficulty="medium")


def refuse_backdated_delivery(c: Ctx) -> Draft:
    # The delivery time named is the shipment's creation: before it shipped, as the events show.
    sh = c.pick([x for x in _ships(c, "in_transit") if x.shipped_at is not None])
    at = sh.shipped_at - dt.timedelta(minutes=c.pick([30, 45, 90, 150]))
    g = grounds("before_shipped", f"{sh.shipped_at:%Y-%m-%d %H:%M}", f"{sh.shipped_at:%Y-%m-%dT%H:%M}")
    prompt = c.say(f"{sh.recipient} says shipment {sh.tracking_no} reached them at {at:%Y-%m-%d %H:%M}. Record the "
                   "delivery with that time.",
                   f"Close out {sh.tracking_no} (to {sh.destination_city}): delivered {at:%Y-%m-%d %H:%M} per the "
                   "signed receipt.")
    return Draft("refuse-backdated-delivery", f"Backdated delivery of {sh.tracking_no}", prompt,
                 [call("search_shipments", tracking_no=sh.tracking_no), call("get_shipment", shipment_id=sh.id),
                  refuse(g, "the delivery time predates the shipping")], "refusal", grounds=g,
                 forbidden=[call("mark_delivered", shipment_id=sh.id, delivered_at=_t(at))], difficulty="medium",
                 tags=["policy"])


#: Not drawn (issue #38): `ask_status`, `ask_in_transit` and `ask_heaviest` (four statuses, a
#: dozen-odd shipments per carrier, tracking numbers that are functions of ids), and
#: `refuse_cancel_shipped` and `refuse_inactive_carrier`, whose figures (a status, the one inactive
#: carrier's id) one constant states. They stay for the tasks written from them.
INTENTS = [assign, ask_first_shipped, refuse_early_delivery, ship, manifest, deliver, ask_transit_weight, ask_recipient,
           cancel, readdress, ask_heaviest_recipient, create, refuse_backdated_delivery, ask_unassigned,
           ask_city_in_transit]
